// dicecam camera page: the reading on screen: the photo with its dice drawn, the dice as
// buttons, and the player's corrections.
import { focusFirst, state, ui } from "./page.js";

// ---------------------------------------------------------------- reading on screen
export async function showReading(reading, blob) {
  state.reading = reading;
  state.photo = blob;
  state.dice = reading.dice
    .map((d) => ({ ...d, corrected: false, removed: false }))
    .sort((a, b) => a.box[0] - b.box[0]);
  try {
    state.image = await createImageBitmap(blob);
  } catch (_) {
    state.image = null;
  }
  draw();
  renderDice();
  ui.readingPanel.hidden = false;
  ui.useRoll.disabled = false;
  noteReading();
}

// The reading in words, as the dice on screen are now (with the player's corrections: a die set
// off the table, a value set, a box removed); the note is a live region, read out.
function noteReading() {
  const reading = state.reading;
  const dice = state.dice.filter((d) => !d.removed);
  const n = dice.length;
  const shown = (list) => list.map(faceText).join(" ");
  const onTable = dice.filter((d) => d.on_table);
  const off = dice.filter((d) => !d.on_table);
  const cocked = onTable.filter((d) => d.cocked).length;
  const unsure = onTable.filter((d) => d.unsure && !d.cocked && !d.corrected).length;
  const notes = [`${n} ${n === 1 ? "die" : "dice"}${onTable.length ? `: ${shown(onTable)}` : ""}`];
  if (off.length) notes.push(`${off.length} off the table (${shown(off)})${bustNote()}`);
  if (cocked) notes.push(`${cocked} cocked: tap to set it or re-roll`);
  if (reading.missing) notes.push(missingNote(reading.missing));
  if (unsure) notes.push(`unsure of ${unsure === 1 ? "one value" : `${unsure} values`}: check ${unsure === 1 ? "it" : "them"} (in yellow, marked ?)`);
  if (reading.added) notes.push(`${reading.added} faint ${reading.added === 1 ? "die" : "dice"} added to make the ${reading.expected_dice} rolled: check ${reading.added === 1 ? "it" : "them"} (in yellow)`);
  // faint dice found without a count: boxes the die check and the face classifier were sure of
  const faint = reading.dice.filter((d) => d.faint).length - (reading.added || 0);
  if (faint > 0) notes.push(`${faint} faint ${faint === 1 ? "die" : "dice"} found: check ${faint === 1 ? "it" : "them"} (in yellow)`);
  if (reading.dropped) notes.push(`${reading.dropped} more ${reading.dropped === 1 ? "box" : "boxes"} than the ${reading.expected_dice} dice rolled left out: check the dice`);
  if (reading.latency_ms != null) notes.push(`${Math.round(reading.latency_ms)} ms`);
  ui.readingNote.textContent = notes.join(" · ");
}

// A die off the table busts a Morning Roll turn at once (the rules), said before the roll is used.
function bustNote() {
  const t = state.turn;
  return t && !t.over && t.game === "morning-roll" ? ": using this roll busts the turn" : "";
}

function missingNote(n) {
  const what = `${n} ${n === 1 ? "die" : "dice"} missing`;
  if (state.turn && !state.turn.over && state.turn.game === "morning-roll" && state.missingDice === "bust") {
    return `${what}: using this roll busts the turn (retake it if a die is just out of view)`;
  }
  return `${what}: retake the photo with every die in view, or type the values`;
}

// A die's value as the page shows it: with a "?" while the reader is unsure of it or it is cocked.
function faceText(d) {
  return (d.cocked || (d.unsure && !d.corrected)) && d.on_table ? `${d.value}?` : String(d.value);
}

// What the colour of a die's box and button says, in words ("" for a die read plainly).
function dieState(d) {
  return !d.on_table ? "off the table" : d.cocked ? "cocked"
    : d.faint && !d.corrected ? "found faintly" : d.unsure && !d.corrected ? "unsure" : "";
}

function dieWords(d) {
  return `${d.value}${dieState(d) ? ` ${dieState(d)}` : ""}`;
}

export function draw() {
  const c = ui.canvas;
  const img = state.image;
  const w = img ? img.width : (state.reading ? state.reading.width : 640);
  const h = img ? img.height : (state.reading ? state.reading.height : 480);
  c.width = w; c.height = h;
  const g = c.getContext("2d");
  g.fillStyle = "#000"; g.fillRect(0, 0, w, h);
  if (img) g.drawImage(img, 0, 0, w, h);
  const lw = Math.max(2, Math.round(Math.min(w, h) / 200));
  g.lineWidth = lw;
  g.font = `bold ${Math.max(14, Math.round(Math.min(w, h) / 18))}px system-ui, sans-serif`;
  for (const d of state.dice) {
    if (d.removed) continue;
    const [x1, y1, x2, y2] = d.box;
    const color = !d.on_table ? "#dc2626" : d.cocked ? "#f59e0b" : d.corrected ? "#2563eb"
      : d.faint || d.unsure ? "#eab308" : "#22c55e";
    g.strokeStyle = color;
    g.strokeRect(x1, y1, x2 - x1, y2 - y1);
    const label = !d.on_table ? `${d.value} off` : d.unsure && !d.corrected ? `${d.value}?` : String(d.value);
    const tw = g.measureText(label).width + lw * 4;
    const th = parseInt(g.font.match(/(\d+)px/)[1], 10) + lw * 2;
    const ty = y1 - th >= 0 ? y1 - th : y2;
    g.fillStyle = color;
    g.fillRect(x1, ty, tw, th);
    g.fillStyle = "#fff";
    g.fillText(label, x1 + lw * 2, ty + th - lw * 2);
  }
  const dice = state.dice.filter((d) => !d.removed);
  c.setAttribute("aria-label", dice.length
    ? `photo of the roll, ${dice.length} ${dice.length === 1 ? "die" : "dice"} marked: ${dice.map(dieWords).join(", ")}`
    : "photo of the roll, no dice marked");
  ui.video.hidden = true;
  c.hidden = false;
}

export function renderDice() {
  ui.dice.innerHTML = "";
  let shown = 0;
  state.dice.forEach((d, i) => {
    if (d.removed) return;
    shown += 1;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "die" + (d.on_table ? "" : " off") + (d.corrected ? " corrected" : "")
      + (d.faint && !d.corrected ? " faint" : "") + (d.unsure && !d.corrected ? " unsure" : "")
      + (d.cocked && d.on_table ? " cocked" : "");
    b.textContent = faceText(d);
    b.setAttribute("aria-label", `die ${shown}: ${d.value}${dieState(d) ? `, ${dieState(d)}` : ""}`);
    b.title = !d.on_table ? "off the table: tap to correct"
      : d.faint && !d.corrected ? "found faintly: check it, tap to correct"
      : d.unsure && !d.corrected ? "the reader is unsure of this value: check it, tap to correct"
      : "tap to correct";
    b.dataset.index = String(i);
    b.addEventListener("click", () => correct(i));
    ui.dice.appendChild(b);
  });
}

export function correct(i) {
  const d = state.dice[i];
  ui.picker.returnValue = "";
  ui.picker.showModal();
  ui.picker.onclose = () => {
    const v = ui.picker.returnValue;
    if (!v) return;
    if (v === "off") d.on_table = false;
    else if (v === "table") d.on_table = true;
    else if (v === "remove") d.removed = true;
    else { d.value = Number(v); d.cocked = false; d.on_table = true; }
    d.corrected = true;
    draw();
    renderDice();
    noteReading();
    // back to this die (its button was made anew), or the next one when it was removed
    const chips = [...ui.dice.querySelectorAll(".die")];
    focusFirst(...chips.filter((b) => Number(b.dataset.index) >= i), ...chips.reverse(), ui.useRoll);
  };
}

export function dieAt(evt) {
  const c = ui.canvas;
  const r = c.getBoundingClientRect();
  // the canvas is drawn with object-fit: contain; undo the letterbox
  const scale = Math.min(r.width / c.width, r.height / c.height);
  const ox = (r.width - c.width * scale) / 2, oy = (r.height - c.height * scale) / 2;
  const x = (evt.clientX - r.left - ox) / scale, y = (evt.clientY - r.top - oy) / scale;
  let best = -1, bestDist = Infinity;
  state.dice.forEach((d, i) => {
    if (d.removed) return;
    const [x1, y1, x2, y2] = d.box;
    const pad = Math.max(x2 - x1, y2 - y1) * 0.25;
    if (x < x1 - pad || x > x2 + pad || y < y1 - pad || y > y2 + pad) return;
    const dist = Math.hypot(x - (x1 + x2) / 2, y - (y1 + y2) / 2);
    if (dist < bestDist) { best = i; bestDist = dist; }
  });
  return best;
}

export function rollFromScreen() {
  const dice = state.dice.filter((d) => !d.removed);
  return {
    values: dice.filter((d) => d.on_table).map((d) => d.value),
    offTable: dice.filter((d) => !d.on_table).length,
    corrected: state.dice.some((d) => d.corrected),
  };
}
