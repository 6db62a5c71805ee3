// dicecam camera page: the house rules of the chosen game (the "(option)" items of the rules'
// READINGS.md), remembered per game on this phone; a new turn and a scored roll use them.
import { api, ui } from "./page.js";
import { setGameNames } from "./words.js";

const known = { rules: {}, choices: {}, choiceLabels: {}, labels: {}, hints: {} }; // /api/v1/games
const stored = (game) => `dicecam.rules.${game}`;

function saved(game) {
  try {
    const out = JSON.parse(localStorage.getItem(stored(game)) || "{}");
    return out && typeof out === "object" ? out : {};
  } catch (_) {
    return {};
  }
}

// The rules of `game` the player changed from the game as written (the default: {}).
export function chosenRules(game = ui.game.value) {
  const mine = saved(game);
  const out = {};
  for (const [name, dflt] of Object.entries(known.rules[game] || {})) {
    if (name in mine && typeof mine[name] === typeof dflt && mine[name] !== dflt) out[name] = mine[name];
  }
  return out;
}

// A house rule in a player's words (its key only for a rule the service gives no label).
export function ruleLabel(game, name) {
  return (known.labels[game] || {})[name] || name.replaceAll("_", " ");
}

// A value of a house rule of text in a player's words (the value itself for one the service
// gives no label).
function choiceLabel(game, name, value) {
  return ((known.choiceLabels[game] || {})[name] || {})[value] || String(value);
}

// The house rules `rules` ({key: value}) of `game`, in words: "Score by: Pips of the dice left".
export function ruleWords(game, rules) {
  return Object.entries(rules).map(([k, v]) => (v === true ? ruleLabel(game, k) : `${ruleLabel(game, k)}: ${choiceLabel(game, k, v)}`));
}

// `&rule=KEY=VALUE...` for /api/v1/score
export function rulesQuery(game = ui.game.value) {
  return Object.entries(chosenRules(game))
    .map(([k, v]) => `&rule=${encodeURIComponent(`${k}=${v}`)}`)
    .join("");
}

function choose(game, name, value) {
  localStorage.setItem(stored(game), JSON.stringify({ ...saved(game), [name]: value }));
  showSummary(game);
}

function showSummary(game) {
  const chosen = ruleWords(game, chosenRules(game));
  ui.rulesSummary.textContent = chosen.length ? chosen.join(", ") : "as written";
}

function control(game, name, dflt, value) {
  const choices = (known.choices[game] || {})[name];
  let input;
  if (typeof dflt === "boolean") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = value;
    input.addEventListener("change", () => choose(game, name, input.checked));
  } else if (choices) {
    input = document.createElement("select");
    for (const c of choices) input.add(new Option(choiceLabel(game, name, c), c, false, c === value));
    input.addEventListener("change", () => choose(game, name, input.value));
  } else {
    input = document.createElement("input");
    input.type = "number";
    input.min = "1";
    input.value = String(value);
    input.addEventListener("change", () => {
      const n = Number(input.value);
      if (Number.isInteger(n) && n > 0) choose(game, name, n);
      else input.value = String(chosenRules(game)[name] ?? dflt);
    });
  }
  input.id = `rule-${name}`;
  input.name = name;
  const label = document.createElement("label");
  label.className = "toggle";
  const words = ruleLabel(game, name);
  if (input.type === "checkbox") label.append(input, ` ${words}`);
  else label.append(`${words} `, input);
  const item = document.createElement("div");
  item.append(label);
  const hint = (known.hints[game] || {})[name];
  if (hint) {
    const note = document.createElement("div");
    note.className = "hint";
    note.id = `rule-${name}-hint`;
    note.textContent = hint;
    input.setAttribute("aria-describedby", note.id);
    item.append(note);
  }
  return item;
}

// Show the chosen game's house rules (none: the section is hidden).
export function renderRules() {
  const game = ui.game.value;
  const rules = known.rules[game] || {};
  const chosen = chosenRules(game);
  ui.rulesList.replaceChildren(
    ...Object.entries(rules).map(([name, dflt]) => control(game, name, dflt, name in chosen ? chosen[name] : dflt)),
  );
  ui.houseRules.hidden = !Object.keys(rules).length;
  showSummary(game);
}

export async function loadHouseRules() {
  const games = await api("/api/v1/games");
  setGameNames(games.game_titles);
  known.rules = games.house_rules || {};
  known.choices = games.house_rule_choices || {};
  known.choiceLabels = games.house_rule_choice_labels || {};
  known.labels = games.house_rule_labels || {};
  known.hints = games.house_rule_hints || {};
  renderRules();
}
