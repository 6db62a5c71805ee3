// dicecam camera page: plain JS, no build step, talks to /api/v1 of the same server.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  player: $("player"), game: $("game"), turnForm: $("turn-form"),
  video: $("preview"), canvas: $("photo"), settle: $("settle"),
  startCamera: $("start-camera"), capture: $("capture"), live: $("live"), file: $("file"),
  cameraNote: $("camera-note"), readingPanel: $("reading-panel"), dice: $("dice"),
  readingNote: $("reading-note"), useRoll: $("use-roll"), retake: $("retake"),
  total: $("turn-total"), diceLeft: $("dice-left"), state: $("turn-state"),
  message: $("message"), keeps: $("keeps"), bank: $("bank"),
  typedForm: $("typed-form"), typed: $("typed"), picker: $("picker"),
  trackerForm: $("tracker-form"), password: $("password"), trackerNote: $("tracker-note"),
};

const state = {
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

async function api(path, options = {}) {
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

function say(text, kind = "") {
  ui.message.textContent = text;
  ui.message.className = kind;
}

// ---------------------------------------------------------------- setup
async function loadConfig() {
  ui.player.value = localStorage.getItem("dicecam.player") || "";
  try {
    const cfg = await api("/api/v1/config");
    state.settleFrames = cfg.live_settle_frames || 3;
    state.missingDice = cfg.missing_dice || "bust";
    ui.game.innerHTML = "";
    for (const g of cfg.games) {
      const opt = document.createElement("option");
      opt.value = g; opt.textContent = g;
      ui.game.appendChild(opt);
    }
    ui.game.value = localStorage.getItem("dicecam.game") || "morning-roll";
    if (!ui.game.value) ui.game.value = cfg.games[0];
  } catch (err) {
    say(`Cannot reach the service: ${err.message}`, "bust");
  }
  if (!window.isSecureContext || !navigator.mediaDevices) {
    ui.cameraNote.textContent =
      "The camera needs HTTPS on a phone: run `dicecam serve --https`. Photos from the gallery work anyway.";
  }
}

// ---------------------------------------------------------------- camera
async function startCamera() {
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

function showPreview() {
  ui.canvas.hidden = true;
  ui.video.hidden = false;
}

function grabFrame() {
  const v = ui.video;
  if (!v.videoWidth) return Promise.resolve(null);
  const c = document.createElement("canvas");
  c.width = v.videoWidth; c.height = v.videoHeight;
  c.getContext("2d").drawImage(v, 0, 0);
  return new Promise((resolve) => c.toBlob(resolve, "image/jpeg", 0.9));
}

async function capture() {
  const blob = await grabFrame();
  if (!blob) { ui.cameraNote.textContent = "The camera has no picture yet."; return; }
  await readPhoto(blob, "capture.jpg");
}

async function readPhoto(blob, name) {
  const form = new FormData();
  form.append("photo", blob, name);
  if (state.turn && !state.turn.over) form.append("expected_dice", String(state.turn.dice_left));
  ui.readingNote.textContent = "Reading…";
  try {
    const reading = await api("/api/v1/read", { method: "POST", body: form });
    await showReading(reading, blob);
    return reading;
  } catch (err) {
    ui.readingPanel.hidden = false;
    ui.readingNote.textContent = err.message;
    return null;
  }
}

// ---------------------------------------------------------------- reading on screen
async function showReading(reading, blob) {
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
  const n = state.dice.length;
  const notes = [`${n} ${n === 1 ? "die" : "dice"}`];
  if (reading.off_table) notes.push(`${reading.off_table} off the table`);
  if (reading.cocked) notes.push(`${reading.cocked} cocked: tap to set it or re-roll`);
  if (reading.missing) notes.push(missingNote(reading.missing));
  if (reading.unsure) notes.push(`unsure of ${reading.unsure === 1 ? "one value" : `${reading.unsure} values`}: check ${reading.unsure === 1 ? "it" : "them"} (in yellow, marked ?)`);
  if (reading.added) notes.push(`${reading.added} faint ${reading.added === 1 ? "die" : "dice"} added to make the ${reading.expected_dice} rolled: check ${reading.added === 1 ? "it" : "them"} (in yellow)`);
  if (reading.dropped) notes.push(`${reading.dropped} more ${reading.dropped === 1 ? "box" : "boxes"} than the ${reading.expected_dice} dice rolled left out: check the dice`);
  if (reading.latency_ms != null) notes.push(`${Math.round(reading.latency_ms)} ms`);
  ui.readingNote.textContent = notes.join(" · ");
}

function missingNote(n) {
  const what = `${n} ${n === 1 ? "die" : "dice"} missing`;
  if (state.turn && !state.turn.over && state.turn.game === "morning-roll" && state.missingDice === "bust") {
    return `${what}: using this roll busts the turn (retake it if a die is just out of view)`;
  }
  return `${what}: retake the photo with every die in view, or type the values`;
}

function draw() {
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
  ui.video.hidden = true;
  c.hidden = false;
}

function renderDice() {
  ui.dice.innerHTML = "";
  state.dice.forEach((d, i) => {
    if (d.removed) return;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "die" + (d.on_table ? "" : " off") + (d.corrected ? " corrected" : "")
      + (d.faint && !d.corrected ? " faint" : "") + (d.unsure && !d.corrected ? " unsure" : "");
    b.textContent = (d.cocked || (d.unsure && !d.corrected)) && d.on_table ? `${d.value}?` : String(d.value);
    b.title = !d.on_table ? "off the table: tap to correct"
      : d.faint && !d.corrected ? "found faintly to make the dice count: check it, tap to correct"
      : d.unsure && !d.corrected ? "the reader is unsure of this value: check it, tap to correct"
      : "tap to correct";
    b.dataset.index = String(i);
    b.addEventListener("click", () => correct(i));
    ui.dice.appendChild(b);
  });
}

function correct(i) {
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
  };
}

function dieAt(evt) {
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

function rollFromScreen() {
  const dice = state.dice.filter((d) => !d.removed);
  return {
    values: dice.filter((d) => d.on_table).map((d) => d.value),
    offTable: dice.filter((d) => !d.on_table).length,
    corrected: state.dice.some((d) => d.corrected),
  };
}

// ---------------------------------------------------------------- turns
async function newTurn(evt) {
  evt.preventDefault();
  const player = ui.player.value.trim();
  if (!player) { say("Type the player's name first."); ui.player.focus(); return; }
  localStorage.setItem("dicecam.player", player);
  localStorage.setItem("dicecam.game", ui.game.value);
  try {
    const token = localStorage.getItem(`dicecam.token.${player}`) || null;
    const turn = await api("/api/v1/turns", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ player, game: ui.game.value, tracker_token: token }),
    });
    state.live.taken = null;
    renderTurn(turn);
  } catch (err) {
    // games played roll by roll (solitaire-dice, low-high) are scored without a turn
    state.turn = null;
    say(err.message);
  }
}

async function useRoll() {
  if (!state.reading && !state.photo) return;
  const roll = rollFromScreen();
  const form = new FormData();
  form.append("photo", state.photo, "roll.jpg");
  if (roll.corrected) {
    form.append("values", roll.values.join(","));
    form.append("off_table", String(roll.offTable));
  }
  await sendRoll(form, null);
}

async function sendRoll(form, json) {
  if (state.busy) return;
  state.busy = true;
  ui.useRoll.disabled = true;
  const opts = form
    ? { method: "POST", body: form }
    : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(json) };
  try {
    if (state.turn && !state.turn.over) {
      const turn = await api(`/api/v1/turns/${state.turn.id}/rolls`, opts);
      renderTurn(turn);
    } else {
      const scored = await api(`/api/v1/score?game=${encodeURIComponent(ui.game.value)}`, opts);
      renderScore(scored);
    }
  } catch (err) {
    say(err.message, "bust");
    ui.useRoll.disabled = false;
  } finally {
    state.busy = false;
  }
}

function keepLabel(k) {
  const ev = k.expected != null ? ` · expect ${Math.round(k.expected)}` : "";
  const then = k.then ? ` · then ${k.then}` : "";
  const forced = k.forced_reroll ? " · forced re-roll" : "";
  return [`Keep ${k.dice.join(" ")}`, `${k.points} pts${then}${ev}${forced}`];
}

function renderKeeps(keeps, onPick) {
  ui.keeps.innerHTML = "";
  for (const k of keeps) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    const [a, c] = keepLabel(k);
    b.innerHTML = `<span class="keep-dice"></span><span class="ev"></span>`;
    b.firstChild.textContent = a;
    b.lastChild.textContent = c;
    b.disabled = !onPick;
    if (onPick) b.addEventListener("click", () => onPick(k));
    li.appendChild(b);
    ui.keeps.appendChild(li);
  }
}

function renderTurn(turn) {
  state.turn = turn;
  ui.total.textContent = String(turn.turn_points);
  ui.diceLeft.textContent = String(turn.dice_left);
  ui.state.textContent = turn.state || turn.awaiting;
  ui.bank.disabled = turn.over || turn.awaiting !== "roll-or-bank" || turn.must_roll;
  if (turn.bust) {
    say(`Bust: ${turn.bust_reason || "no scoring dice"}. The turn scores 0.`, "bust");
  } else if (turn.outcome === "banked") {
    say(`Banked ${turn.turn_points} points.`, "good");
  } else if (turn.awaiting === "keep") {
    say("Choose what to keep (best first).");
  } else if (turn.forced_reroll) {
    say(`Forced re-roll: roll all ${turn.dice_left} dice (banking is not allowed now).`);
  } else if (turn.must_roll && turn.rolls > 0) {
    say(`Roll again: ${turn.turn_points} cannot be banked. Roll ${turn.dice_left} dice.`);
  } else if (turn.hot_dice) {
    say(`Every die scored: roll all ${turn.dice_left} again, or bank ${turn.turn_points}.`);
  } else if (turn.rolls === 0) {
    say(`${turn.player}: roll ${turn.dice_left} dice.`);
  } else {
    say(`Roll ${turn.dice_left} dice, or bank ${turn.turn_points}.`);
  }
  if (turn.submission) {
    const s = turn.submission;
    ui.message.textContent += ` Tracker: ${s.status}${s.detail ? ` (${s.detail})` : ""}.`;
  }
  renderKeeps(turn.keeps || [], turn.awaiting === "keep" ? keep : null);
}

function renderScore(scored) {
  ui.state.textContent = "scored";
  ui.diceLeft.textContent = String(scored.values.length);
  if (scored.bust) {
    say(`Bust${scored.bust_reason ? `: ${scored.bust_reason}` : ""}.`, "bust");
  } else {
    say(`${ui.game.value}: ${scored.values.join(" ")}`);
  }
  if (scored.keeps) {
    renderKeeps(scored.keeps, null); // ranked by the advisor on the server
  } else {
    ui.keeps.innerHTML = "";
    for (const o of scored.options || []) {
      const li = document.createElement("li");
      li.className = "option";
      const parts = [];
      if (o.keep) parts.push(`Keep ${o.keep.join(" ")}`);
      if (o.combos) parts.push(`combos ${o.combos.join(" and ")}`);
      if ("reject" in o) parts.push(o.reject == null ? "free ride" : `reject ${o.reject}`);
      if (o.ends_game) parts.push("ends the game");
      if (o.score_after != null) parts.push(`score after ${o.score_after}`);
      li.textContent = parts.length ? parts.join(" · ") : JSON.stringify(o);
      ui.keeps.appendChild(li);
    }
    if (!(scored.options || []).length) say("No legal move: the roll goes bad.", "bust");
  }
}

async function keep(k) {
  try {
    const turn = await api(`/api/v1/turns/${state.turn.id}/keep`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ dice: k.dice }),
    });
    renderTurn(turn);
    if (state.stream) showPreview();
  } catch (err) {
    say(err.message, "bust");
  }
}

async function bank() {
  try {
    renderTurn(await api(`/api/v1/turns/${state.turn.id}/bank`, { method: "POST" }));
  } catch (err) {
    say(err.message, "bust");
  }
}

// ---------------------------------------------------------------- live mode
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
    const reading = await api("/api/v1/read", { method: "POST", body: form });
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
    // a reading fitted to the dice count (a faint die added, a box left out), or with a value
    // the reader is unsure of, waits for the player
    const doubtful = reading.added || reading.dropped || reading.unsure;
    if (t && !t.over && t.awaiting !== "keep" && count === t.dice_left && !reading.cocked && !doubtful) {
      await useRoll();
    }
  } catch (err) {
    ui.settle.hidden = false;
    ui.settle.textContent = err.message;
  } finally {
    live.busy = false;
  }
}

function startLive() {
  stopLive();
  if (!state.stream) return;
  showPreview();
  state.live.timer = setInterval(liveTick, 500);
}

function stopLive() {
  if (state.live.timer) clearInterval(state.live.timer);
  state.live.timer = null;
  state.live.sig = null;
  state.live.count = 0;
  ui.settle.hidden = true;
}

// ---------------------------------------------------------------- tracker login
async function trackerLogin(evt) {
  evt.preventDefault();
  const name = ui.player.value.trim();
  if (!name) { ui.trackerNote.textContent = "Type the player's name above first."; return; }
  try {
    const out = await api("/tracker/api/v1/tokens", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, password: ui.password.value }),
    });
    localStorage.setItem(`dicecam.token.${name}`, out.token);
    ui.password.value = "";
    ui.trackerNote.textContent = `Logged in as ${out.player.name}: Morning Roll turns are submitted.`;
  } catch (err) {
    ui.trackerNote.textContent = err.status === 404
      ? "No tracker on this server (dicecam serve --no-tracker)."
      : `Tracker login failed: ${err.message}`;
  }
}

// ---------------------------------------------------------------- wiring
ui.trackerForm.addEventListener("submit", trackerLogin);
ui.turnForm.addEventListener("submit", newTurn);
ui.startCamera.addEventListener("click", startCamera);
ui.capture.addEventListener("click", capture);
ui.live.addEventListener("change", async () => {
  if (ui.live.checked) {
    if (!state.stream) await startCamera();
    startLive();
  } else {
    stopLive();
  }
});
ui.file.addEventListener("change", async () => {
  const f = ui.file.files[0];
  if (f) await readPhoto(f, f.name);
  ui.file.value = "";
});
ui.canvas.addEventListener("click", (evt) => {
  const i = dieAt(evt);
  if (i >= 0) correct(i);
});
ui.useRoll.addEventListener("click", useRoll);
ui.retake.addEventListener("click", () => {
  state.reading = null; state.photo = null; state.live.taken = null;
  ui.readingPanel.hidden = true;
  if (state.stream) showPreview();
});
ui.bank.addEventListener("click", bank);
ui.typedForm.addEventListener("submit", async (evt) => {
  evt.preventDefault();
  const values = ui.typed.value.split(/[\s,]+/).filter(Boolean).map(Number);
  if (!values.length || values.some((v) => !Number.isInteger(v) || v < 1 || v > 6)) {
    say("Type the dice values as numbers 1 to 6, like 1 5 5 2 3 6.");
    return;
  }
  await sendRoll(null, { values });
  ui.typed.value = "";
});
loadConfig();
