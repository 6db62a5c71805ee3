// dicecam camera page: the page's elements, its state, and calls to /api/v1 of the same server.

export const $ = (id) => document.getElementById(id);
export const ui = {
  player: $("player"), game: $("game"), turnForm: $("turn-form"),
  video: $("preview"), canvas: $("photo"), settle: $("settle"),
  startCamera: $("start-camera"), capture: $("capture"), live: $("live"), file: $("file"),
  pickPhoto: $("pick-photo"), readerModel: $("reader-model"), newTurn: $("new-turn"),
  cameraNote: $("camera-note"), readingPanel: $("reading-panel"), dice: $("dice"),
  readingNote: $("reading-note"), useRoll: $("use-roll"), retake: $("retake"),
  total: $("turn-total"), diceLeft: $("dice-left"), state: $("turn-state"),
  message: $("message"), keeps: $("keeps"), bank: $("bank"),
  typedForm: $("typed-form"), typed: $("typed"), picker: $("picker"),
  trackerForm: $("tracker-form"), password: $("password"), trackerNote: $("tracker-note"),
  houseRules: $("house-rules"), rulesList: $("rules-list"), rulesSummary: $("rules-summary"),
  openTurn: $("open-turn"), openTurnText: $("open-turn-text"), resumeTurn: $("resume-turn"),
  abandonTurn: $("abandon-turn"),
};

export const state = {
  turn: null,          // the turn JSON from the API, or null (score-only mode)
  reading: null,       // the reading JSON of the photo on screen
  dice: [],            // [{value, box, on_table, cocked, corrected, removed}]
  photo: null,         // Blob of the photo on screen
  image: null,         // ImageBitmap/HTMLImageElement drawn on the canvas
  settleFrames: 3,
  stream: null,
  live: { timer: null, busy: false, abort: null, sig: null, count: 0, taken: null },
  busy: false,
  unsure: false,       // a move's answer was lost: read the turn again before the next move
  tracker: null,       // where finished Morning Roll turns go: "embedded", a URL, or null (none)
};
window.dicecam = state; // handy in the console and for tests

export const UNREACHABLE = "Cannot reach the dicecam service (is the Wi-Fi on? is the service running?)";

// How long a call waits for the service's answer, in seconds: a photo sent (a FormData body) 30,
// any other call 10. `?timeout_s=N` on the page's address sets both to N (a slow network; tests).
export const TIMEOUT_S = (() => {
  const asked = Number(new URLSearchParams(location.search).get("timeout_s"));
  return asked > 0 && Number.isFinite(asked) ? { photo: asked, call: asked } : { photo: 30, call: 10 };
})();

function failure(message, extra) {
  return Object.assign(new Error(message), extra);
}

// A call to the service, given up after TIMEOUT_S (or when `options.signal` aborts); an error
// says why, with `status` (0: no answer came, and then `offline` is true: the request may or may
// not have reached the service; `timedOut` when it did not answer in time).
export async function api(path, options = {}) {
  const seconds = options.body instanceof FormData ? TIMEOUT_S.photo : TIMEOUT_S.call;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new DOMException("timed out", "TimeoutError")), seconds * 1000);
  const given = options.signal;
  const stop = () => abort.abort(given.reason);
  if (given) given.aborted ? stop() : given.addEventListener("abort", stop, { once: true });
  const lost = (cause) => (abort.signal.aborted && abort.signal.reason?.name === "TimeoutError"
    ? failure(`The dicecam service did not answer in time (${seconds} s): nothing on this page is `
      + "lost, try again.", { status: 0, offline: true, timedOut: true, cause })
    : failure(`${UNREACHABLE}: nothing on this page is lost, try again once it is back.`,
      { status: 0, offline: true, cause, aborted: abort.signal.aborted }));
  try {
    let res;
    try {
      res = await fetch(path, { ...options, signal: abort.signal });
    } catch (cause) { // offline, the service stopped, the connection dropped mid-answer, timed out
      throw lost(cause);
    }
    let body = null;
    try { body = await res.json(); } catch (cause) {
      if (abort.signal.aborted) throw lost(cause); // the answer stalled half-way
      body = null;
    }
    if (!res.ok) {
      // no sentence from the service (a proxy's error page, a crash): say so, with its status
      const detail = body && body.detail ? body.detail
        : `The dicecam service did not answer properly (${res.status}): try again in a moment.`;
      throw failure(typeof detail === "string" ? detail : JSON.stringify(detail), { status: res.status });
    }
    return body;
  } finally {
    clearTimeout(timer);
    if (given) given.removeEventListener("abort", stop);
  }
}

// The POST options of a roll: a photo `form` (multipart), else the typed `json` values.
export function rollRequest(form, json) {
  return form
    ? { method: "POST", body: form }
    : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(json) };
}

export function say(text, kind = "") {
  ui.message.textContent = text;
  ui.message.className = kind;
  $("receipt-details").hidden = true; // a turn's receipt, said with its message
}

// Move the keyboard's focus to the first of `elements` that can take it (after an action that
// removed or disabled the focused control, so that Tab goes on from there).
export function focusFirst(...elements) {
  const el = elements.find((e) => e && !e.disabled && !e.hidden && e.getClientRects().length);
  if (el) el.focus();
}

// The control that takes the next roll: Capture with the camera on, else Photo…
export function rollControl() {
  return ui.capture.disabled ? ui.pickPhoto : ui.capture;
}
