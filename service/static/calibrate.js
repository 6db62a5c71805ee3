// dicecam camera page: calibration of a fixed camera (the playing-surface boundary).
// Takes the camera frame (or a chosen photo), shows the learned outline as a proposal, and lets
// the user tap the corners of the surface, or place them by keyboard (each corner is a button:
// arrow keys move it, Delete removes it, Insert adds one after it); Save stores them with
// PUT /api/v1/calibration.
import { api } from "./page.js";

const $ = (id) => document.getElementById(id);
const ui = {
  start: $("calibrate"), pick: $("calib-pick"), file: $("calib-file"), remove: $("calib-remove"),
  status: $("calib-status"), editor: $("calib-editor"), canvas: $("calib-canvas"),
  proposal: $("calib-proposal"), undo: $("calib-undo"), clear: $("calib-clear"),
  save: $("calib-save"), close: $("calib-close"), note: $("calib-note"), video: $("preview"),
  corners: $("calib-corners"), add: $("calib-add"), drop: $("calib-drop"),
};
const cal = {
  image: null,      // ImageBitmap of the photo being calibrated
  name: null,       // its file name, kept with the calibration
  width: 0, height: 0,
  proposal: null,   // learned outline [[x, y], ...] in image pixels, or null
  points: [],       // the corners placed so far, image pixels
  selected: -1,     // the corner the arrow keys move (the one focused or tapped last)
  stored: null,     // the stored calibration (normalised points), or null
};
window.dicecamCalibration = cal; // for the console and tests

function showStatus(view) {
  cal.stored = view.calibration;
  if (view.calibration) {
    const n = view.calibration.points.length;
    ui.status.textContent = `calibrated: ${n} corners`;
  } else {
    ui.status.textContent = view.error ? `not used: ${view.error}` : "not calibrated: the learned outline is used";
  }
  ui.remove.disabled = !view.calibration && !view.error; // a broken file can be removed too
}

async function refresh() {
  try {
    showStatus(await api("/api/v1/calibration"));
  } catch (err) {
    ui.status.textContent = `calibration unavailable: ${err.message}`;
  }
}

function frameBlob() {
  const v = ui.video;
  const stream = window.dicecam && window.dicecam.stream;
  if (!stream || !v.videoWidth) return Promise.resolve(null);
  const c = document.createElement("canvas");
  c.width = v.videoWidth; c.height = v.videoHeight;
  c.getContext("2d").drawImage(v, 0, 0);
  return new Promise((resolve) => c.toBlob(resolve, "image/jpeg", 0.92));
}

async function begin() {
  const blob = await frameBlob();
  if (!blob) { ui.file.click(); return; } // no camera running: choose a photo
  await open(blob, "camera.jpg");
}

let opened = 0; // the photo on screen: a proposal for an earlier one is dropped

async function open(blob, name) {
  const mine = ++opened;
  let image;
  try {
    image = await createImageBitmap(blob);
  } catch (_) {
    ui.note.textContent = "Cannot show this file: choose a photo (JPEG, PNG, WebP).";
    return;
  }
  if (mine !== opened) return;
  cal.image = image;
  cal.name = name;
  cal.width = cal.image.width; cal.height = cal.image.height;
  cal.points = [];
  cal.selected = -1;
  cal.proposal = null;
  ui.editor.hidden = false;
  ui.note.textContent = "Tap the corners of the playing surface, in order around it.";
  draw();
  const form = new FormData();
  form.append("photo", blob, name);
  try {
    const out = await api("/api/v1/calibration/proposal", { method: "POST", body: form });
    if (mine !== opened) return; // another photo was opened meanwhile
    const sx = cal.width / out.width, sy = cal.height / out.height;
    cal.proposal = out.outline && out.outline.length >= 3
      ? out.outline.map(([x, y]) => [Math.round(x * sx * 10) / 10, Math.round(y * sy * 10) / 10])
      : null;
    ui.note.textContent = `${out.note}. Tap the corners of the surface, or use the proposal.`;
  } catch (err) {
    if (mine !== opened) return;
    ui.note.textContent = `No proposal (${err.message}). Tap the corners of the surface.`;
  }
  ui.proposal.disabled = !cal.proposal;
  draw();
}

function polygon(g, pts, stroke, fill, dash) {
  if (!pts.length) return;
  g.setLineDash(dash);
  g.strokeStyle = stroke;
  g.beginPath();
  pts.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
  if (pts.length >= 3) g.closePath();
  if (fill && pts.length >= 3) { g.fillStyle = fill; g.fill(); }
  g.stroke();
  g.setLineDash([]);
}

function draw() {
  const c = ui.canvas;
  if (!cal.image) return;
  c.width = cal.width; c.height = cal.height;
  const g = c.getContext("2d");
  g.drawImage(cal.image, 0, 0);
  const lw = Math.max(2, Math.round(Math.min(c.width, c.height) / 200));
  g.lineWidth = lw;
  if (cal.stored) {
    const pts = cal.stored.points.map(([x, y]) => [x * c.width, y * c.height]);
    polygon(g, pts, "#22c55e", null, [lw * 2, lw * 2]);
  }
  if (cal.proposal) polygon(g, cal.proposal, "#06b6d4", null, [lw * 4, lw * 3]);
  polygon(g, cal.points, "#f59e0b", "rgba(245, 158, 11, 0.18)", []);
  g.font = `bold ${Math.max(12, lw * 7)}px system-ui, sans-serif`;
  cal.points.forEach(([x, y], i) => {
    if (i === cal.selected) { // the corner the arrow keys move: ringed
      g.strokeStyle = "#fff";
      g.beginPath(); g.arc(x, y, lw * 6, 0, 2 * Math.PI); g.stroke();
    }
    g.fillStyle = "#dc2626";
    g.beginPath(); g.arc(x, y, lw * 3, 0, 2 * Math.PI); g.fill();
    g.fillStyle = "#fff";
    g.fillText(String(i + 1), x + lw * 3, y - lw * 3);
  });
  ui.undo.disabled = !cal.points.length;
  ui.clear.disabled = !cal.points.length;
  ui.save.disabled = cal.points.length < 3;
  renderCorners();
}

// ---------------------------------------------------------------- corners, by pointer or keyboard
const clamp = (v, hi) => Math.round(Math.min(Math.max(v, 0), hi) * 10) / 10;
const px = (v) => String(Math.round(v * 10) / 10);
const share = (v, whole) => `${Math.round((v / whole) * 1000) / 10}%`;
const cornerName = (i) => `Corner ${i + 1} of ${cal.points.length}`;
// where corner `i` is, in the photo's pixels and in percent of its width and height
function where(i) {
  const [x, y] = cal.points[i];
  return `${px(x)}, ${px(y)} px (${share(x, cal.width)} across, ${share(y, cal.height)} down)`;
}
const say = (text) => { ui.note.textContent = text; }; // a live region: read out
const STEP_OF = 640; // an arrow key moves a corner by 1/640 of the photo's longer side (at least 1 px)
const step = (big) => Math.max(1, Math.round(Math.max(cal.width, cal.height) / STEP_OF)) * (big ? 10 : 1);
const START = [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9]]; // the first corners added by keyboard

// The corners as buttons, the selected one pressed; the buttons are kept (not made anew) so that
// the focused one keeps the focus while its corner moves.
function renderCorners() {
  const list = ui.corners;
  while (list.children.length > cal.points.length) list.lastElementChild.remove();
  while (list.children.length < cal.points.length) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "corner";
    b.setAttribute("aria-describedby", "calib-keys");
    b.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight ArrowUp ArrowDown Delete Insert");
    list.appendChild(document.createElement("li")).appendChild(b);
  }
  cal.points.forEach(([x, y], i) => {
    const b = list.children[i].firstElementChild;
    b.dataset.index = String(i);
    b.textContent = `${i + 1}: ${px(x)}, ${px(y)}`;
    b.setAttribute("aria-label", `${cornerName(i)}: ${where(i)}`);
    b.setAttribute("aria-pressed", String(i === cal.selected));
  });
  ui.drop.disabled = cal.selected < 0 || cal.selected >= cal.points.length;
}

function focusCorner() {
  const li = ui.corners.children[cal.selected];
  (li ? li.firstElementChild : ui.add).focus();
}

function moveCorner(i, dx, dy) {
  const [x, y] = cal.points[i];
  cal.points[i] = [clamp(x + dx, cal.width), clamp(y + dy, cal.height)];
  cal.selected = i;
  say(`${cornerName(i)} moved to ${where(i)}.`);
  draw();
}

// A corner after the selected one, halfway to the next; the first four make a rectangle inside
// the photo's edges, to move into place.
function addCorner() {
  const n = cal.points.length;
  let at = n, x, y;
  if (n < START.length) {
    [x, y] = [START[n][0] * cal.width, START[n][1] * cal.height];
  } else {
    const i = cal.selected >= 0 && cal.selected < n ? cal.selected : n - 1;
    const [a, b] = [cal.points[i], cal.points[(i + 1) % n]];
    [at, x, y] = [i + 1, (a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  }
  cal.points.splice(at, 0, [clamp(x, cal.width), clamp(y, cal.height)]);
  cal.selected = at;
  say(`${cornerName(at)} added at ${where(at)}.`);
  draw();
}

function dropCorner(i) {
  if (i < 0 || i >= cal.points.length) return;
  cal.points.splice(i, 1);
  const n = cal.points.length;
  cal.selected = n ? Math.max(0, i - 1) : -1;
  say(`Corner ${i + 1} removed: ${n} ${n === 1 ? "corner" : "corners"} left${n && n < 3 ? ", 3 needed" : ""}.`);
  draw();
}

function cornerKey(evt) {
  const b = evt.target.closest("button.corner");
  if (!b || evt.altKey || evt.ctrlKey || evt.metaKey) return;
  const i = Number(b.dataset.index);
  const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  if (evt.key in arrows) {
    const [dx, dy] = arrows[evt.key];
    moveCorner(i, dx * step(evt.shiftKey), dy * step(evt.shiftKey));
  } else if (evt.key === "Delete" || evt.key === "Backspace") {
    dropCorner(i);
    focusCorner();
  } else if (evt.key === "Insert" || evt.key === "+") {
    cal.selected = i;
    addCorner();
    focusCorner();
  } else {
    return;
  }
  evt.preventDefault(); // an arrow key does not scroll the page
}

function selectCorner(evt) {
  const b = evt.target.closest("button.corner");
  if (!b || Number(b.dataset.index) === cal.selected) return;
  cal.selected = Number(b.dataset.index);
  draw();
}

function tap(evt) {
  const c = ui.canvas;
  const r = c.getBoundingClientRect();
  const x = ((evt.clientX - r.left) * c.width) / r.width;
  const y = ((evt.clientY - r.top) * c.height) / r.height;
  cal.points.push([clamp(x, c.width), clamp(y, c.height)]);
  const n = cal.points.length;
  cal.selected = n - 1;
  say(`${n} ${n === 1 ? "corner" : "corners"}: corner ${n} at ${where(n - 1)}. `
    + (n < 3 ? "Tap at least 3." : "Save when the outline fits."));
  draw();
}

async function save() {
  ui.save.disabled = true; // once: it comes back with the answer, or with the time-out
  const mine = opened;
  try {
    const view = await api("/api/v1/calibration", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ points: cal.points, width: cal.width, height: cal.height, image: cal.name }),
    });
    showStatus(view);
    if (mine !== opened) { draw(); return; } // another photo opened meanwhile: its corners stay
    cal.points = [];
    cal.selected = -1;
    ui.note.textContent = "Saved: dice outside this boundary are off the table from the next photo on.";
    draw();
  } catch (err) {
    ui.note.textContent = `Not saved: ${err.message}`;
    ui.save.disabled = cal.points.length < 3;
  }
}

async function remove() {
  try {
    const view = await api("/api/v1/calibration", { method: "DELETE" });
    showStatus(view);
    ui.note.textContent = "Calibration removed: the learned outline is used again.";
    draw();
  } catch (err) {
    ui.note.textContent = `Not removed: ${err.message}`;
  }
}

ui.start.addEventListener("click", begin);
ui.pick.addEventListener("click", () => ui.file.click());
ui.file.addEventListener("change", async () => {
  const f = ui.file.files[0];
  if (f) await open(f, f.name);
  ui.file.value = "";
});
ui.canvas.addEventListener("click", tap);
ui.proposal.addEventListener("click", () => {
  if (!cal.proposal) return;
  cal.points = cal.proposal.map(([x, y]) => [x, y]);
  cal.selected = 0;
  say(`Proposal used: ${cal.points.length} corners, ${cornerName(0).toLowerCase()} at ${where(0)}. `
    + "Tab to a corner to move it.");
  draw();
});
ui.undo.addEventListener("click", () => dropCorner(cal.points.length - 1));
ui.clear.addEventListener("click", () => {
  cal.points = [];
  cal.selected = -1;
  say("Corners cleared: tap them, or add them by keyboard.");
  draw();
});
ui.add.addEventListener("click", addCorner);
ui.drop.addEventListener("click", () => dropCorner(cal.selected));
ui.corners.addEventListener("keydown", cornerKey);
ui.corners.addEventListener("focusin", selectCorner);
ui.corners.addEventListener("click", selectCorner);
ui.save.addEventListener("click", save);
ui.remove.addEventListener("click", remove);
ui.close.addEventListener("click", () => { ui.editor.hidden = true; ui.note.textContent = ""; });
refresh();
