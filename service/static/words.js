// dicecam camera page: what the service names in code, in a player's words. The State field says
// what the game on screen waits for; its `data-state` keeps the service's name of it (a turn's
// `state`, a sheet's or Low-High turn's `awaiting`, "scored", "no turn") for tests and scripts.
import { $, state, ui } from "./page.js";

// The games by their names in the rules (the service names them as in URLs: "morning-roll"):
// those GET /api/v1/games gives (its `game_titles`, set by setGameNames); these only until then,
// or when it did not answer.
const GAMES = {
  "morning-roll": "Morning Roll", "farkle-five": "Five-dice Farkle", greed: "Greed",
  "solitaire-dice": "Solitaire Dice", "low-high": "Low-High",
};
const served = {};
export const gameName = (game) => served[game] || GAMES[game] || game;

// The games' names the service gives; the game menu says them.
export function setGameNames(titles) {
  Object.assign(served, titles || {});
  for (const opt of ui.game.options) opt.textContent = gameName(opt.value);
}

const diceWord = (n) => `${n} ${n === 1 ? "die" : "dice"}`;

// A keep-and-reroll turn (Morning Roll, Five-dice Farkle, Greed).
function turnWords(t) {
  if (t.state === "awaiting_keep") return "Choose the dice to keep";
  if (t.state === "banked") return `Turn over: ${t.scored ?? t.turn_points} points`;
  if (t.state === "bust") return "Bust: turn over, 0 points";
  if (!t.rolls) return `Roll ${diceWord(t.dice_left)}`;
  const left = t.forced_reroll || t.hot_dice ? `all ${diceWord(t.dice_left)} again` : `the ${diceWord(t.dice_left)} left`;
  return `Roll ${left}${t.awaiting === "roll-or-bank" ? ", or bank" : ""}`;
}

// A Solitaire Dice sheet or a Low-High turn.
function sheetWords(v) {
  const sheet = v.game === "solitaire-dice";
  if (v.awaiting === "nothing") return `${sheet ? "Game" : "Turn"} over: score ${v.score}`;
  if (v.awaiting === "split") return "Choose a split";
  if (v.awaiting === "keep") return "Choose a set to keep";
  const roll = `Roll ${sheet ? "five dice" : diceWord(v.dice_left)}`;
  return v.awaiting === "roll-or-end" ? `${roll}, or end the turn` : roll;
}

function show(code, words) {
  ui.state.dataset.state = code;
  ui.state.textContent = words;
}

// The State field for `view`: a turn, a sheet or Low-High turn, or null (none on screen).
export function showState(view) {
  if (!view) show("no turn", "No turn: press New turn");
  else if ("turn_points" in view) show(view.state, turnWords(view));
  else show(view.awaiting, sheetWords(view));
}

// The State field for a roll scored without a turn (no turn started for the game chosen).
export function showScored() {
  show("scored", "Roll scored, no turn");
}

// What became of a finished turn at the tracker, in words: [what the player reads, the service's
// detail for whoever runs it ("" when the words hold it)]. `retryS`: how often the service hands
// turns to the tracker again (0: never on its own, `dicecam outbox deliver` does).
export function receiptWords(turn, retryS) {
  const s = turn.submission;
  const again = retryS ? " The dicecam service hands the turn to the tracker again on its own "
    + "(the tracker counts it once); its receipt shows here once saved." : "";
  if (!s) {
    if (turn.game !== "morning-roll") return ["", ""];
    return [`No tracker receipt saved for this turn yet (the service could not save it, or has not handed the turn over yet).${again}`, ""];
  }
  const kept = "The turn is saved by the dicecam service: "
    + (retryS ? "it will be sent to the tracker when the tracker can be reached."
      : "ask whoever runs the service to send it to the tracker.");
  const recorded = s.turn ? `${s.turn.score} points recorded for ${s.turn.player} on ${s.turn.day}` : "taken";
  const words = {
    submitted: `Sent to the tracker: ${recorded}.`,
    queued: s.login
      ? "Not sent yet: the tracker did not take your login (expired or logged out). The turn is "
        + "saved by the dicecam service: log in to the tracker below to send it."
      : `Not sent yet: the tracker cannot be reached now. ${kept}`,
    rejected: "The tracker refused this turn, it does not count there",
    "not-submitted": "Not sent to the tracker",
    failed: `Not sent yet. ${kept}`,
  }[s.status];
  // a status this page has no words for (a newer service): what the player can do, the status
  // itself only in the details, for whoever runs the service
  const unknown = words === undefined;
  const shown = unknown ? "This page cannot tell what became of the turn at the tracker: look "
    + "on the tracker's pages, or ask whoever runs the dicecam service (reloading this page "
    + "may help)" : words;
  const unsaved = s.saved === false ? ` The dicecam service could not save this receipt.${again}` : "";
  // a refusal's or a turn not sent's reason is the player's; the rest (the outbox's folder, an
  // error) is for whoever runs the service
  const inline = s.detail && ["rejected", "not-submitted"].includes(s.status) && s.saved !== false;
  const said = inline ? `${shown}: ${s.detail}.` : /[.!?]$/.test(shown) ? shown : `${shown}.`;
  const detail = unknown ? [`tracker receipt status: ${s.status}`, s.detail].filter(Boolean).join("; ")
    : inline ? "" : s.detail || "";
  return [`${said}${unsaved}`, detail];
}

// Add the receipt of `turn`, once over, to the page's message; the service's detail goes in the
// folded "Details" below it (hidden when there is none).
export function showReceipt(turn) {
  const [words, detail] = turn.over ? receiptWords(turn, state.outboxRetryS) : ["", ""];
  if (words) ui.message.textContent += ` ${words}`;
  $("receipt-detail").textContent = detail;
  $("receipt-details").hidden = !detail;
}
