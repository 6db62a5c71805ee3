// dicecam camera page: the games played across rolls without keep-and-reroll turns. Solitaire
// Dice: a score sheet (/api/v1/sheets), each roll split into a reject and two combos. Low-High: a
// turn (/api/v1/low-high/turns), a set kept from each roll until the player ends it.
import { $, api, focusFirst, rollControl, rollRequest, say, state, ui } from "./page.js";
import { noun, remember } from "./resume.js";
import { chosenRules, ruleWords } from "./rules.js";
import { showState } from "./words.js";

export const ROUTES = { "solitaire-dice": "/api/v1/sheets", "low-high": "/api/v1/low-high/turns" };
const els = { box: $("sheet"), table: $("sheet-table"), moves: $("sheet-moves"), end: $("sheet-end") };

// A sheet or Low-High turn is in play while its game is the one chosen: another game chosen
// meanwhile scores its rolls (or plays its turn), and choosing its game again brings it back.
export const sheetActive = () => Boolean(state.sheet && state.sheet.game === ui.game.value);

export function clearSheet() {
  state.sheet = null;
  els.box.hidden = true;
  els.moves.innerHTML = "";
}

const dice = (values) => values.join(" ");
const signed = (n) => (n > 0 ? `+${n}` : String(n));

// Start a sheet or Low-High turn when the game chosen is one and return true (a start the
// service refuses throws as api() does: the caller says why); else clear any on screen and
// return false (the caller starts a keep-and-reroll turn).
export async function startSheet(player) {
  const route = ROUTES[ui.game.value];
  if (!route) { clearSheet(); return false; }
  const view = await api(route, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ player, rules: chosenRules() }),
  });
  state.live.taken = null;
  showSheet(view);
  focusFirst(rollControl());
  return true;
}

// Show a sheet or Low-High turn (started, or resumed) in place of any Farkle turn.
export function showSheet(view) {
  state.turn = null; // the Farkle turn's keeps and Bank do not apply
  ui.keeps.innerHTML = "";
  ui.bank.disabled = true;
  renderSheet(view);
}

const signature = ({ reading, ...view }) => JSON.stringify(view); // a roll's answer adds its reading

// The sheets and turns (ids) a move's answer was lost for (status 0: the move may or may not
// have reached the service): read again before their next move, which is then not sent twice.
const unsure = new Set();
const REACHED = "Your last move reached the dicecam service (its answer was lost on the way).";

// Read the sheet or turn shown again and show it when it moved on (a move whose answer was
// lost; another tab or device). Returns what to say before its message when it had (the lost
// move reached the service, or it moved on elsewhere), else null. Throws as api() does.
export async function rereadSheet() {
  const shown = state.sheet;
  const now = await api(`${ROUTES[shown.game]}/${encodeURIComponent(shown.id)}`);
  const lost = unsure.delete(shown.id);
  if (state.sheet !== shown || signature(now) === signature(shown)) return null;
  renderSheet(now);
  return lost ? REACHED : `The ${noun(shown.game)} moved on elsewhere (another tab or device).`;
}

// A move on the sheet or turn shown, made on it as shown (its roll count is sent: one that moved
// on in another tab refuses it, and is then read again); after an answer lost on the way it is
// read again first, and a move that did reach the service is not sent again. Returns whether
// it was made.
async function move(path, options) {
  const shown = state.sheet;
  const url = `${ROUTES[shown.game]}/${encodeURIComponent(shown.id)}${path}?rolls=${shown.rolls}`;
  try {
    const reached = unsure.has(shown.id) && await rereadSheet();
    if (reached) { say(`${reached} ${ui.message.textContent}`); return false; }
    renderSheet(await api(url, options));
    return true;
  } catch (err) {
    if (err.offline) unsure.add(shown.id);
    let now = null;
    if (err.status === 409) {
      try { now = await api(`${ROUTES[shown.game]}/${encodeURIComponent(shown.id)}`); } catch (_) { /* said below */ }
    }
    if (now && state.sheet === shown) renderSheet(now, { quiet: true });
    else if (state.sheet) renderMoves(state.sheet); // its buttons back on
    if (err.status === 404) remember({ ...shown, over: true }); // gone: nothing to resume
    say(err.message, "bust");
    return false;
  }
}

// A roll (a photo `form`, or `json` values) for the sheet or turn shown.
export async function sendSheetRoll(form, json) {
  if (state.busy) return false;
  state.busy = true;
  ui.useRoll.disabled = true;
  const opts = rollRequest(form, json);
  let done = false;
  try {
    done = await move("/rolls", opts);
    focusFirst(els.moves.querySelector("button"), els.end, rollControl());
  } finally {
    ui.useRoll.disabled = done;
    state.busy = false;
  }
  return done;
}

async function choose(path, body) {
  if (state.busy) return;
  state.busy = true;
  for (const b of els.moves.querySelectorAll("button")) b.disabled = true;
  els.end.disabled = true;
  try {
    await move(path, body
      ? { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
      : { method: "POST" });
  } finally {
    state.busy = false;
    focusFirst(els.moves.querySelector("button:not(:disabled)"), rollControl(), ui.newTurn);
  }
}

function moveButton(label, detail, onClick) {
  const li = document.createElement("li");
  const b = document.createElement("button");
  b.type = "button";
  b.innerHTML = `<span class="keep-dice"></span><span class="ev"></span>`;
  b.firstChild.textContent = label;
  b.lastChild.textContent = detail;
  b.setAttribute("aria-label", detail ? `${label}, ${detail}` : label);
  b.addEventListener("click", onClick);
  li.appendChild(b);
  els.moves.appendChild(li);
}

function renderMoves(view) {
  els.moves.innerHTML = "";
  if (view.game === "solitaire-dice") {
    for (const s of view.splits || []) {
      const label = `${s.free_ride ? "Free ride" : `Reject ${s.reject}`}, combos ${s.combos.join(" and ")}`;
      const detail = `score ${s.score_after} (${signed(s.score_change)})${s.ends_game ? ", ends the game" : ""}`;
      moveButton(label, detail, () => choose("/split", { reject: s.reject, combos: s.combos }));
    }
  } else {
    for (const s of view.sets || []) {
      moveButton(`Keep ${dice(s.keep)}`, `${s.count} ${s.count === 1 ? "die" : "dice"}`,
        () => choose("/keep", { face: s.face }));
    }
  }
  els.end.hidden = view.game !== "low-high";
  els.end.disabled = view.awaiting !== "roll-or-end";
}

function renderTable(view) {
  const rows = [];
  if (view.game === "solitaire-dice") {
    rows.push(["Combo", "Marks"]);
    for (const [sum, marks] of Object.entries(view.marks)) if (marks) rows.push([sum, String(marks)]);
    const rejects = Object.entries(view.rejects).filter(([, n]) => n).map(([f, n]) => `${f}×${n}`);
    rows.push(["Rejects", rejects.join(", ") || "none"], ["Free rides", String(view.free_rides)]);
  } else {
    rows.push(["Track", "Dice"], ["Good", dice(view.good) || "none"], ["Bad", dice(view.bad) || "none"],
      ["Score", `${view.score} (dice ${view.scores.dice}, pips ${view.scores.pips})`]);
  }
  els.table.innerHTML = "";
  rows.forEach((cells, i) => {
    const tr = els.table.insertRow();
    for (const text of cells) {
      const cell = document.createElement(i === 0 ? "th" : "td");
      cell.textContent = text;
      tr.appendChild(cell);
    }
  });
}

// What the sheet or turn shown says now, in the page's status line (announced).
function message(view) {
  const last = view.last_roll ? dice(view.last_roll.values) : "";
  if (view.game === "solitaire-dice") {
    if (view.over) return [`${view.player}'s game is over (eighth reject of one face): final score ${view.score}.`, "good"];
    if (view.awaiting === "split") return [`Roll ${last}: choose a split (${view.splits.length} legal).`, ""];
    const h = view.history[view.history.length - 1];
    const done = h ? `${h.free_ride ? "Free ride" : `Rejected ${h.reject}`}, combos ${h.combos.join(" and ")}: score ${view.score}. ` : "";
    return [`${done}${view.player}: roll five dice.`, ""];
  }
  if (view.outcome === "all-bad") return [`Roll ${last}: every die went bad, the turn is over. Score ${view.score}.`, "bust"];
  if (view.over) return [`Turn over: score ${view.score}.`, "good"];
  const bad = view.last_bad && view.last_bad.length ? ` ${view.last_bad.length} bad (${dice(view.last_bad)}).` : "";
  if (view.awaiting === "keep") return [`Roll ${last}:${bad} Keep a set.`, ""];
  if (view.awaiting === "roll-or-end") return [`Score ${view.score}: roll ${view.dice_left} dice, or end the turn.`, ""];
  return [`${view.player}: roll ${view.dice_left} dice${houseRules(view)}.`, ""];
}

// " (house rules: Score by: Pips of the dice left)" for a game not yet rolled under house rules,
// as a Farkle turn says them as it starts; "" otherwise.
function houseRules(view) {
  const house = view.rolls === 0 ? ruleWords(view.game, view.rules || {}) : [];
  return house.length ? ` (house rules: ${house.join(", ")})` : "";
}

export function renderSheet(view, { quiet = false } = {}) {
  state.sheet = view;
  remember(view);
  els.box.hidden = false;
  ui.total.textContent = String(view.score);
  ui.diceLeft.textContent = String(view.dice_left);
  showState(view);
  renderTable(view);
  renderMoves(view);
  if (!quiet) say(...message(view));
}

els.end.addEventListener("click", () => choose("/end"));
ui.game.addEventListener("change", () => {
  if (!state.sheet) return;
  if (sheetActive()) { renderSheet(state.sheet); return; }
  els.box.hidden = true;
  if (!state.turn) {
    ui.total.textContent = "0";
    ui.diceLeft.textContent = "–";
    showState(null);
  }
});
