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
};
window.dicecam = state; // handy in the console and for tests

export async function api(path, options = {}) {
  const res = await fetch(path, options);
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
