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
  live: { timer: null, busy: false, sig: null, count: 0, taken: null },
  busy: false,
  unsure: false,       // a move's answer was lost: read the turn again before the next move
};
window.dicecam = state; // handy in the console and for tests

export const UNREACHABLE = "Cannot reach the dicecam service (is the Wi-Fi on? is the service running?)";

// A call to the service; an error says why, with `status` (0: the service could not be reached,
// and then `offline` is true: the request may or may not have reached it).
export async function api(path, options = {}) {
  let res;
  try {
    res = await fetch(path, options);
  } catch (cause) { // offline, the service stopped, the connection dropped mid-answer
    const err = new Error(`${UNREACHABLE}: nothing on this page is lost, try again once it is back.`);
    err.status = 0;
    err.offline = true;
    err.cause = cause;
    throw err;
  }
  let body = null;
  try { body = await res.json(); } catch (_) { body = null; }
  if (!res.ok) {
    const detail = body && body.detail ? body.detail : `${res.status} ${res.statusText}`;
    const err = new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
    err.status = res.status;
    throw err;
  }
  return body;
}

export function say(text, kind = "") {
  ui.message.textContent = text;
  ui.message.className = kind;
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
