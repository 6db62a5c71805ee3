// dicecam camera page: turns: start one, send rolls, keep dice, bank; Solitaire Dice and
// Low-High are played by sheets.js.
import { showPreview } from "./camera.js";
import { $, api, focusFirst, rollControl, rollRequest, say, state, ui } from "./page.js";
import { rollFromScreen } from "./reading.js";
import { listOpenGames, remember, warnOpenTurn } from "./resume.js";
import { chosenRules, ruleWords, rulesQuery } from "./rules.js";
import { clearSheet, sendSheetRoll, sheetActive, startSheet } from "./sheets.js";
import { gameName, showReceipt, showScored, showState } from "./words.js";

// ---------------------------------------------------------------- turns
export async function newTurn(evt, { anyway = false } = {}) {
  if (evt) evt.preventDefault();
  const player = ui.player.value.trim();
  if (!player) { say("Type the player's name first."); ui.player.focus(); return; }
  localStorage.setItem("dicecam.player", player);
  localStorage.setItem("dicecam.game", ui.game.value);
  ui.openTurn.hidden = true;
  try {
    // a game of this player still open (on screen, before a reload, on another device): ask first
    if (!anyway && await warnOpenTurn(player, ui.game.value, () => newTurn(null, { anyway: true }))) return;
  } catch (err) {
    say(err.message, "bust"); // the service is away: the page stays as it was
    return;
  }
  await startTurn(player);
  listOpenGames(); // the game left unplayed, if any, can be resumed from the list
}

async function startTurn(player) {
  try {
    if (await startSheet(player)) return; // solitaire-dice, low-high: a sheet or a Low-High turn
    const token = localStorage.getItem(`dicecam.token.${player}`) || null;
    const turn = await api("/api/v1/turns", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ player, game: ui.game.value, tracker_token: token, rules: chosenRules() }),
    });
    state.live.taken = null;
    renderTurn(turn);
    if (!token && turn.game === "morning-roll" && state.tracker) { // else it is not submitted
      say(`${ui.message.textContent} Not logged in to the Morning Roll tracker: log in below `
        + "before the turn ends to submit it.");
      $("tracker").open = true;
    }
    focusFirst(rollControl());
  } catch (err) {
    // whatever game is on screen (a turn, a sheet) is not the one asked for: nothing to keep,
    // bank or split there, and a roll goes to no game; one still open is listed to resume
    clearTurn();
    clearSheet();
    say(err.message, "bust");
  }
}

// After a move the focused control may be gone or disabled: focus the next thing to do (a keep,
// Bank, a new turn; the roll's control) so that Tab and the screen reader go on from there.
function focusNext() {
  const t = state.turn;
  const focused = document.activeElement;
  if (!t) {
    if (!focused || focused === document.body || focused.disabled) focusFirst(rollControl());
  } else if (t.over) {
    focusFirst(ui.newTurn);
  } else if (t.awaiting === "keep") {
    focusFirst(ui.keeps.querySelector("button"), rollControl());
  } else {
    focusFirst(ui.bank, rollControl());
  }
}

function clearTurn() {
  state.turn = null;
  ui.total.textContent = "0";
  ui.diceLeft.textContent = "–";
  showState(null);
  ui.bank.disabled = true;
  ui.keeps.innerHTML = "";
  showTakeBack(null);
}

const signature = (t) => JSON.stringify([t.id, t.history, t.outcome, t.submission]);

// Read the turn again from the service and show it when it moved on from the one on screen (a
// move whose answer was lost; another tab). Returns whether it had. Throws as api() does.
export async function reread() {
  const shown = state.turn;
  const now = await api(`/api/v1/turns/${encodeURIComponent(shown.id)}`);
  state.unsure = false;
  if (state.turn !== shown || signature(now) === signature(shown)) return false;
  renderTurn(now);
  return true;
}

const sentence = (text) => (/[.!?:)]$/.test(text) ? text : `${text}.`);

// A move on the turn (a roll, a keep, a bank) with what it sends, one at a time: a second tap
// while the first is on its way answered "this turn is over" over the first one's receipt. The
// move is made on the turn as shown (its roll count is sent: a turn that moved on in another
// tab refuses it); after an answer lost on the way the turn is read again first, and a move
// that did reach the service is not sent again. Returns whether the move was made.
async function move(path, options) {
  const shown = state.turn;
  try {
    if (state.unsure && await reread()) {
      say(`Your last move reached the dicecam service (its answer was lost on the way). ${ui.message.textContent}`);
      return false;
    }
    // the turn as shown: a keep taken back and another made elsewhere leave its rolls as they were
    const seen = shown.moves == null ? "" : `&moves=${shown.moves}`;
    const url = `/api/v1/turns/${encodeURIComponent(shown.id)}/${path}?rolls=${shown.rolls}${seen}`;
    renderTurn(await api(url, options));
    return true;
  } catch (err) {
    state.unsure ||= Boolean(err.offline);
    if (err.status === 409) { // moved on elsewhere, or not allowed now: show it as it is
      try { if (await reread()) { say(`${sentence(err.message)} ${ui.message.textContent}`, "bust"); return false; } } catch (_) { /* said below */ }
    } else if (err.status === 404) {
      remember({ ...shown, over: true }); // gone from the service: nothing to resume
    }
    say(err.status === 404
      ? `The dicecam service no longer knows this turn (${err.message}): start a new turn.`
      : err.message, "bust");
    if (state.turn) renderKeeps(state.turn.keeps || [], state.turn.awaiting === "keep" ? keep : null);
    if (state.turn) ui.bank.disabled = bankDisabled(state.turn);
    return false;
  }
}

// A keep or a bank, with the turn's buttons off while it is on its way.
async function turnMove(path, options) {
  if (state.busy || !state.turn) return false;
  state.busy = true;
  ui.bank.disabled = true;
  takeBack.disabled = true;
  for (const b of ui.keeps.querySelectorAll("button")) b.disabled = true;
  try {
    return await move(path, options);
  } finally {
    state.busy = false;
    showTakeBack(state.turn);
    focusNext();
  }
}

export async function useRoll({ focus = true } = {}) {
  if (!state.reading && !state.photo) return;
  const roll = rollFromScreen();
  const form = new FormData();
  form.append("photo", state.photo, "roll.jpg");
  if (roll.corrected) {
    form.append("values", roll.values.join(","));
    form.append("off_table", String(roll.offTable));
  }
  await sendRoll(form, null, { focus });
}

// Send a roll (a photo `form`, or `json` values) to the turn, else score it. Returns whether it
// was taken: else what was sent stays on the page to send again.
export async function sendRoll(form, json, { focus = true } = {}) {
  if (sheetActive()) return sendSheetRoll(form, json);
  if (state.busy) return false;
  state.busy = true;
  ui.useRoll.disabled = true;
  const opts = rollRequest(form, json);
  let done = false;
  try {
    if (state.turn && !state.turn.over) {
      done = await move("rolls", opts);
    } else {
      const game = encodeURIComponent(ui.game.value);
      const scored = await api(`/api/v1/score?game=${game}${rulesQuery()}`, opts);
      renderScore(scored);
      done = true;
    }
    if (focus) focusNext();
  } catch (err) {
    say(err.message, "bust");
  } finally {
    ui.useRoll.disabled = done;
    state.busy = false;
  }
  return done;
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
    b.setAttribute("aria-label", `${a}, ${c}`); // read as one run, "Keep 1 1 1" ran into "1000 pts"
    b.disabled = !onPick;
    if (onPick) b.addEventListener("click", () => onPick(k));
    li.appendChild(b);
    ui.keeps.appendChild(li);
  }
}

const bankDisabled = (turn) => turn.over || turn.awaiting !== "roll-or-bank" || turn.must_roll;

export function renderTurn(turn) {
  state.turn = turn;
  remember(turn);
  ui.total.textContent = String(turn.turn_points);
  ui.diceLeft.textContent = String(turn.dice_left);
  showState(turn);
  ui.bank.disabled = bankDisabled(turn);
  showTakeBack(turn);
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
    const house = ruleWords(turn.game, turn.rules || {});
    const under = house.length ? ` (house rules: ${house.join(", ")})` : "";
    say(`${turn.player}: roll ${turn.dice_left} dice${under}.`);
  } else {
    say(`Roll ${turn.dice_left} dice, or bank ${turn.turn_points}.`);
  }
  showReceipt(turn);
  renderKeeps(turn.keeps || [], turn.awaiting === "keep" ? keep : null);
  watchReceipt(turn);
}

// A finished Morning Roll turn whose receipt may still change: queued (the tracker was down, or
// refused the player's login), failed (not handed over: the service tries again), or not saved
// by the service (`saved: false`, or read back with none). The service hands it over again on
// its own: look again at its pace (at most every 5 s) and show the receipt once the service
// holds a new one; a receipt on screen that the service could not save stays until then (the
// turn reads back without one meanwhile).
function watchReceipt(turn) {
  const s = turn.submission;
  const waits = s ? ["queued", "failed"].includes(s.status) || s.saved === false : turn.over && turn.game === "morning-roll";
  if (!waits || !state.outboxRetryS) return;
  setTimeout(async () => {
    if (!state.turn || state.turn.id !== turn.id) return;
    try {
      const now = state.busy ? null : await api(`/api/v1/turns/${encodeURIComponent(turn.id)}`);
      if (!state.turn || state.turn.id !== turn.id) return;
      if (now && now.submission && signature(now) !== signature(turn)) renderTurn(now);
      else watchReceipt(turn); // no new receipt yet
    } catch (err) { // away: look again later (the next move says so); gone: nothing to show
      if (err.status !== 404) watchReceipt(turn);
    }
  }, Math.max(5, state.outboxRetryS) * 1000);
}

function renderScore(scored) {
  showScored();
  ui.diceLeft.textContent = String(scored.values.length);
  if (scored.bust) {
    say(`Bust${scored.bust_reason ? `: ${scored.bust_reason}` : ""}.`, "bust");
  } else {
    say(`${gameName(ui.game.value)}: ${scored.values.join(" ")}`);
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
  const done = await turnMove("keep", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ dice: k.dice }),
  });
  if (done && state.stream) showPreview();
}

export async function bank() {
  await turnMove("bank", { method: "POST" });
}

// "Take back keep": a keep is a choice, not a throw, so until the next roll the player may take
// a mis-tapped one back (the service's `take_back`; never a roll, nor a finished turn) and
// choose again from the same roll.
const takeBack = $("take-back");

function showTakeBack(turn) {
  const k = turn && !turn.over ? turn.take_back : null;
  takeBack.hidden = !k;
  takeBack.disabled = !k;
  takeBack.textContent = k ? `Take back keep ${k.dice.join(" ")}` : "Take back keep";
}

async function takeBackKeep() {
  const k = state.turn?.take_back;
  if (!k || !(await turnMove("undo", { method: "POST" }))) return;
  say(`Took back the keep of ${k.dice.join(" ")} (${k.points} points): nothing of it counts. ${ui.message.textContent}`);
}

takeBack.addEventListener("click", takeBackKeep);
