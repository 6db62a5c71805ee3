// dicecam camera page: the camera, reading a photo, and live mode (a roll read as soon as it
// settles, and used when it is the roll the turn expects).
import { api, focusFirst, state, ui } from "./page.js";
import { showReading } from "./reading.js";
import { useRoll } from "./turns.js";

// ---------------------------------------------------------------- camera
export async function startCamera() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    ui.cameraNote.textContent = "No camera here (the page needs HTTPS or localhost). Use Photo… instead.";
    return;
  }
  try {
    state.stream = await navigator.mediaDevices.getUserMedia({
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 960 } },
      audio: false,
    });
  } catch (err) {
    ui.cameraNote.textContent = `Camera refused: ${err.message}. Use Photo… instead.`;
    return;
  }
  ui.video.srcObject = state.stream;
  await ui.video.play().catch(() => {});
  showPreview();
  ui.capture.disabled = false;
  ui.startCamera.textContent = "Camera on";
  ui.startCamera.disabled = true;
  ui.cameraNote.textContent = "";
  if (ui.live.checked) startLive();
}

export function showPreview() {
  ui.canvas.hidden = true;
  ui.video.hidden = false;
}

export function grabFrame() {
  const v = ui.video;
  if (!v.videoWidth) return Promise.resolve(null);
  const c = document.createElement("canvas");
  c.width = v.videoWidth; c.height = v.videoHeight;
  c.getContext("2d").drawImage(v, 0, 0);
  return new Promise((resolve) => c.toBlob(resolve, "image/jpeg", 0.9));
}

export async function capture() {
  const blob = await grabFrame();
  if (!blob) { ui.cameraNote.textContent = "The camera has no picture yet."; return; }
  await readPhoto(blob, "capture.jpg");
}

export async function readPhoto(blob, name) {
  const form = new FormData();
  form.append("photo", blob, name);
  if (state.turn && !state.turn.over) form.append("expected_dice", String(state.turn.dice_left));
  ui.readingNote.textContent = "Reading…";
  try {
    const reading = await api("/api/v1/read", { method: "POST", body: form });
    await showReading(reading, blob);
    focusFirst(ui.dice.querySelector(".die"), ui.useRoll); // the dice read, to check or correct
    return reading;
  } catch (err) {
    ui.readingPanel.hidden = false;
    ui.readingNote.textContent = err.message;
    return null;
  }
}

// ---------------------------------------------------------------- live mode
// One frame at a time: the next is taken once the last one's answer came, or once it was given
// up (TIMEOUT_S in page.js), so that a slow or stuck service never has frames piling up.
function signature(reading) {
  return JSON.stringify([[...reading.values].sort(), reading.off_table, reading.dice.length]);
}

async function liveTick() {
  const live = state.live;
  if (live.busy || state.busy || !ui.video.videoWidth) return;
  if (ui.picker.open) return;
  live.busy = true;
  try {
    const blob = await grabFrame();
    if (!blob) return;
    const form = new FormData();
    form.append("photo", blob, "frame.jpg");
    if (state.turn && !state.turn.over) form.append("expected_dice", String(state.turn.dice_left));
    live.abort = new AbortController(); // Live off drops the frame on its way
    const reading = await api("/api/v1/read", { method: "POST", body: form, signal: live.abort.signal });
    const sig = signature(reading);
    if (sig === live.sig) live.count += 1;
    else { live.sig = sig; live.count = 1; if (sig !== live.taken) live.taken = null; }
    const n = reading.dice.length;
    ui.settle.hidden = false;
    ui.settle.textContent = n ? `${n} dice · settling ${Math.min(live.count, state.settleFrames)}/${state.settleFrames}` : "no dice";
    if (n === 0 || live.count < state.settleFrames || live.taken === sig) return;
    live.taken = sig;
    ui.settle.textContent = `${n} dice · settled`;
    await showReading(reading, blob);
    const t = state.turn;
    const count = reading.values.length + reading.off_table;
    // a reading fitted to the dice count (a faint die added, a box left out), with a faint die
    // or a value the reader is unsure of, waits for the player
    const doubtful = reading.added || reading.dropped || reading.unsure
      || reading.dice.some((d) => d.faint);
    if (t && !t.over && t.awaiting !== "keep" && count === t.dice_left && !reading.cocked && !doubtful) {
      await useRoll({ focus: false }); // hands off: the focus stays where the player left it
    }
  } catch (err) {
    if (err.aborted) return; // Live turned off meanwhile
    ui.settle.hidden = false;
    ui.settle.textContent = err.message; // a frame not answered in time is dropped: the next one goes
  } finally {
    live.busy = false;
    live.abort = null;
  }
}

export function startLive() {
  stopLive();
  if (!state.stream) return;
  showPreview();
  state.live.timer = setInterval(liveTick, 500);
}

export function stopLive() {
  if (state.live.timer) clearInterval(state.live.timer);
  if (state.live.abort) state.live.abort.abort();
  state.live.timer = null;
  state.live.sig = null;
  state.live.count = 0;
  ui.settle.hidden = true;
}
