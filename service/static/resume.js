// dicecam camera page: the open turn outlives the page (a reload, a backgrounded tab the phone
// dropped, a second tab): its id is remembered on this phone per player and game, and the turn
// is read again from the service, which keeps it a day.
import { api, say, state, ui } from "./page.js";
import { reread, renderTurn } from "./turns.js";

const stored = (player, game) => `dicecam.open.${game}.${player.trim().toLowerCase()}`;

// Called with each turn shown: an open turn is remembered, a finished one forgotten.
export function remember(turn) {
  const key = stored(turn.player, turn.game);
  if (!turn.over) localStorage.setItem(key, turn.id);
  else if (localStorage.getItem(key) === turn.id) localStorage.removeItem(key);
}

// The turn of `player` and `game` remembered here, as the service holds it now: null when none
// is remembered, { turn } when the service has it (open or over), { gone } (what to say) when it
// no longer knows it. Throws when the service cannot be reached.
export async function rememberedTurn(player, game) {
  const key = stored(player, game);
  const id = localStorage.getItem(key);
  if (!id) return null;
  try {
    const turn = await api(`/api/v1/turns/${encodeURIComponent(id)}`);
    if (turn.over) localStorage.removeItem(key);
    return { turn };
  } catch (err) {
    if (err.status !== 404) throw err;
    localStorage.removeItem(key);
    return { gone: `The dicecam service no longer knows ${player}'s turn ${id} (${err.message}): `
      + "it cannot be resumed. Start a new turn." };
  }
}

function resumed(turn, player) {
  renderTurn(turn);
  const now = ui.message.textContent;
  ui.message.textContent = turn.over
    ? `${player}'s last turn ended while the page was away. ${now}`
    : `Resumed ${player}'s turn. ${now}`;
}

// On load: the player's open turn of the chosen game comes back, ready for the next move.
export async function resumeOnLoad() {
  const player = ui.player.value.trim();
  if (!player || state.turn) return;
  try {
    const found = await rememberedTurn(player, ui.game.value);
    if (state.turn || !found) return; // a turn started meanwhile is the one to play
    if (found.gone) say(found.gone, "bust");
    else resumed(found.turn, player);
  } catch (err) {
    say(`${err.message} ${player}'s open turn is remembered: reload the page once the service is back.`, "bust");
  }
}

// New turn pressed while `player` has a turn of `game` open with a roll in it: show it and offer
// to resume it or to start another anyway. Returns true when the player must choose first.
export async function warnOpenTurn(player, game, startAnyway) {
  const found = await rememberedTurn(player, game);
  if (!found || found.gone || found.turn.over || !found.turn.rolls) return false; // nothing to lose
  const t = found.turn;
  ui.openTurnText.textContent = `${player} already has a ${game} turn open today: ${t.turn_points} points `
    + `after ${t.rolls} ${t.rolls === 1 ? "roll" : "rolls"}, ${t.dice_left} dice to roll. `
    + "Resume it? A new turn leaves it unplayed.";
  ui.openTurn.hidden = false;
  ui.resumeTurn.onclick = () => { ui.openTurn.hidden = true; resumed(t, player); ui.resumeTurn.blur(); };
  ui.abandonTurn.onclick = () => { ui.openTurn.hidden = true; startAnyway(); };
  ui.resumeTurn.focus();
  return true;
}

// Back to a tab the phone kept in the background (or a second tab): another tab or device may
// have moved the turn meanwhile.
document.addEventListener("visibilitychange", async () => {
  if (document.visibilityState !== "visible" || !state.turn || state.turn.over || state.busy) return;
  try {
    if (await reread()) say(`The turn moved on elsewhere (another tab or device). ${ui.message.textContent}`);
  } catch (_) { /* the next move says the service is away */ }
});
