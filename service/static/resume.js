// dicecam camera page: the open game outlives the page (a reload, a backgrounded tab the phone
// dropped, a second tab, the service restarting): a turn, a Solitaire Dice sheet or a Low-High
// turn is remembered on this phone per player and game, and read again from the service, which
// keeps it a day. The player's open games started on another device are listed to resume here.
import { $, api, focusFirst, rollControl, say, state, ui } from "./page.js";
import { ROUTES, rereadSheet, sheetActive, showSheet } from "./sheets.js";
import { reread, renderTurn } from "./turns.js";
import { gameName } from "./words.js";

const stored = (player, game) => `dicecam.open.${game}.${player.trim().toLowerCase()}`;
const routeOf = (game) => ROUTES[game] || "/api/v1/turns";
export const noun = (game) => (game === "solitaire-dice" ? "sheet" : "turn");
const list = { box: $("open-games"), items: $("open-games-list") };

// Forget `id` under `key` while it is the one remembered there: another tab may have started
// (and remembered) a newer turn meanwhile, to be resumed on its reload.
function forget(key, id) {
  if (localStorage.getItem(key) === id) localStorage.removeItem(key);
}

// Called with each turn or sheet shown: an open one is remembered, a finished one forgotten.
export function remember(view) {
  const key = stored(view.player, view.game);
  if (!view.over) localStorage.setItem(key, view.id);
  else forget(key, view.id);
}

// The turn or sheet of `player` and `game` remembered here, as the service holds it now: null
// when none is remembered, { turn } when the service has it (open or over), { gone } (what to
// say) when it no longer knows it. Throws when the service cannot be reached.
export async function rememberedTurn(player, game) {
  const key = stored(player, game);
  const id = localStorage.getItem(key);
  if (!id) return null;
  try {
    const turn = await api(`${routeOf(game)}/${encodeURIComponent(id)}`);
    if (turn.over) forget(key, id);
    return { turn };
  } catch (err) {
    if (err.status !== 404) throw err;
    forget(key, id);
    return { gone: `The dicecam service no longer knows ${player}'s ${noun(game)} ${id} (${err.message}): `
      + "it cannot be resumed. Start a new turn." };
  }
}

// Show a turn or sheet read from the service, saying it was resumed (or ended `where`).
function resumed(view, player, where = "while the page was away") {
  if (view.game in ROUTES) showSheet(view);
  else renderTurn(view);
  const now = ui.message.textContent;
  const what = noun(view.game);
  ui.message.textContent = view.over
    ? `${player}'s last ${gameName(view.game)} ${what} ended ${where}. ${now}`
    : `Resumed ${player}'s ${what}. ${now}`;
}

// On load: the player's open turn or sheet of the chosen game comes back, ready for the next
// move; the others the service holds for the player are listed.
export async function resumeOnLoad() {
  const player = ui.player.value.trim();
  if (!player || state.turn || state.sheet) return;
  try {
    const found = await rememberedTurn(player, ui.game.value);
    if (state.turn || state.sheet || !found) return; // one started meanwhile is the one to play
    if (found.gone) say(found.gone, "bust");
    else resumed(found.turn, player);
  } catch (err) {
    say(`${err.message} ${player}'s open ${noun(ui.game.value)} is remembered: reload the page once the service is back.`, "bust");
  } finally {
    await listOpenGames();
  }
}

// The open games of `player` the service holds (started on any device), newest first, as
// GET /api/v1/open-games lists them. Throws as api() does.
const openGames = async (player, game) => (await api(`/api/v1/open-games?player=${
  encodeURIComponent(player)}${game ? `&game=${encodeURIComponent(game)}` : ""}`)).games;

const rollsText = (n) => `${n} ${n === 1 ? "roll" : "rolls"}`;

function describe(g) {
  const score = g.game in ROUTES ? `score ${g.score}` : `${g.score} points`;
  const left = g.game === "solitaire-dice" ? "" : `, ${g.dice_left} dice to roll`;
  return `${score} after ${rollsText(g.rolls)}${left}`;
}

// Resume a game of the list (started here or on another device): its game is chosen, and it is
// read afresh and shown, its next move made here.
async function resumeListed(g, player) {
  try {
    const view = await api(`${routeOf(g.game)}/${encodeURIComponent(g.id)}`);
    if (ui.game.value !== g.game) {
      ui.game.value = g.game;
      ui.game.dispatchEvent(new Event("change"));
    }
    localStorage.setItem("dicecam.player", player);
    localStorage.setItem("dicecam.game", g.game);
    ui.openTurn.hidden = true;
    resumed(view, player, "elsewhere");
    focusFirst(...document.querySelectorAll("#keeps button, #sheet-moves button"), rollControl());
  } catch (err) {
    say(err.status === 404
      ? `The dicecam service no longer knows ${player}'s ${noun(g.game)} ${g.id} (${err.message}).`
      : err.message, "bust");
  }
  await listOpenGames();
}

// List the player's open games, less the ones on the page, each a Resume button; hidden when
// there are none (or the service cannot be reached: the next move says so). A listing like the
// one shown leaves its buttons in place: one replaced between a press and its release (a second
// listing, from loading the page or coming back to it) would lose the tap. An answer that comes
// after a later listing was asked for (another name typed, a game started) is stale: dropped.
let listings = 0;
export async function listOpenGames() {
  const player = ui.player.value.trim();
  const listing = ++listings;
  let games = [];
  try {
    if (player) games = await openGames(player);
  } catch (_) { /* said by the page's next call */ }
  if (listing !== listings) return; // a later listing is the one to show, answered or not
  if (player !== ui.player.value.trim()) return; // typed another name meanwhile
  const shown = [state.turn?.id, state.sheet?.id];
  const buttons = games.filter((x) => !shown.includes(x.id)).map((g) => {
    const started = new Date(g.started).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return { g, text: `Resume ${gameName(g.game)} ${noun(g.game)}: ${describe(g)} (started ${started})` };
  });
  const listed = JSON.stringify([player, buttons.map(({ g, text }) => [g.id, text])]);
  if (list.items.dataset.listed === listed) return;
  list.items.dataset.listed = listed;
  list.items.replaceChildren(...buttons.map(({ g, text }) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", () => resumeListed(g, player));
    li.appendChild(b);
    return li;
  }));
  list.box.hidden = !buttons.length;
}

// New turn pressed while `player` has a game of `game` open with a roll in it (on this page,
// before a reload, or on another device): show it and offer to resume it or to start another
// anyway. Returns true when the player must choose first.
export async function warnOpenTurn(player, game, startAnyway) {
  const g = (await openGames(player, game)).find((x) => x.rolls > 0);
  if (!g) return false; // nothing to lose
  const what = noun(game);
  ui.openTurnText.textContent = `${player} already has a ${gameName(game)} ${what} open today: ${describe(g)}. `
    + `Resume it? A new ${what} leaves it unplayed.`;
  ui.openTurn.hidden = false;
  ui.resumeTurn.onclick = async () => {
    ui.openTurn.hidden = true;
    await resumeListed(g, player);
  };
  ui.abandonTurn.onclick = () => { ui.openTurn.hidden = true; startAnyway(); };
  ui.resumeTurn.focus();
  return true;
}

// The turn or sheet on the page read again, said when it moved on meanwhile.
async function rereadShown() {
  const sheet = sheetActive() && !state.sheet.over;
  if (state.busy || (!sheet && (!state.turn || state.turn.over))) return;
  try {
    const moved = sheet
      ? await rereadSheet()
      : (await reread()) && "The turn moved on elsewhere (another tab or device).";
    if (moved) say(`${moved} ${ui.message.textContent}`);
  } catch (_) { /* the next move says the service is away */ }
}

// Back to a tab the phone kept in the background (or a second tab): another tab or device may
// have moved the turn or sheet meanwhile, and started or finished other games of the player.
document.addEventListener("visibilitychange", async () => {
  if (document.visibilityState !== "visible") return;
  await rereadShown();
  await listOpenGames();
});
ui.player.addEventListener("change", listOpenGames);
