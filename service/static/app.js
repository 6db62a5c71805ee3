// dicecam camera page: plain JS modules, no build step, talking to /api/v1 of the same server.
// page.js holds the elements and state; camera.js, reading.js and turns.js the rest.
import { capture, readPhoto, showPreview, startCamera, startLive, stopLive } from "./camera.js";
import { $, api, focusFirst, rollControl, say, state, ui } from "./page.js";
import { correct, dieAt } from "./reading.js";
import { resumeOnLoad } from "./resume.js";
import { loadHouseRules, renderRules } from "./rules.js";
import { bank, newTurn, sendRoll, useRoll } from "./turns.js";
import { gameName } from "./words.js";

// ---------------------------------------------------------------- setup
async function loadConfig() {
  ui.player.value = localStorage.getItem("dicecam.player") || "";
  try {
    const cfg = await api("/api/v1/config");
    state.settleFrames = cfg.live_settle_frames || 3;
    state.missingDice = cfg.missing_dice || "bust";
    state.outboxRetryS = cfg.outbox_retry_s || 0;
    ui.game.innerHTML = "";
    for (const g of cfg.games) {
      const opt = document.createElement("option");
      opt.value = g; opt.textContent = gameName(g);
      ui.game.appendChild(opt);
    }
    ui.game.value = localStorage.getItem("dicecam.game") || "morning-roll";
    if (!ui.game.value) ui.game.value = cfg.games[0];
    await loadHouseRules();
  } catch (err) {
    say(err.offline ? err.message : `The service did not give its settings: ${err.message}`, "bust");
    return;
  } finally {
    if (!window.isSecureContext || !navigator.mediaDevices) {
      ui.cameraNote.textContent =
        "The camera needs HTTPS on a phone: run `dicecam serve --https`. Photos from the gallery work anyway.";
    }
  }
  await resumeOnLoad(); // the player's open turn, after a reload
}

// The model that reads the dice (a fine-tuned one through DICECAM_MODEL or --model): the loaded
// one, else the one the first photo loads; and where a new player registers on the tracker.
async function showHealth() {
  try {
    const { reader, tracker } = await api("/api/v1/health");
    showRegister(tracker);
    const path = reader.model || reader.configured_model;
    if (!path) return; // a reader the service was given in code: no file to name
    ui.readerModel.textContent = `Reading with ${path.split(/[\\/]/).pop()}`
      + (reader.error ? ` (not loaded: ${reader.error})` : "");
    ui.readerModel.title = path;
    ui.readerModel.hidden = false;
  } catch (_) { /* loadConfig says the service is away */ }
}

// The tracker's registration form: the embedded tracker's, a remote tracker's (its URL), or
// none (no tracker: the login says so).
function showRegister(tracker) {
  state.tracker = tracker || null;
  if (!tracker) return;
  const root = tracker === "embedded" ? "/tracker" : tracker.replace(/\/+$/, "");
  $("tracker-register-link").href = `${root}/register`;
  $("tracker-register").hidden = false;
}

// Whether the typed player is logged in to the tracker on this phone.
function showLogin() {
  const name = ui.player.value.trim();
  ui.trackerNote.textContent = name && localStorage.getItem(`dicecam.token.${name}`)
    ? `Logged in as ${name}: Morning Roll turns are submitted.`
    : "Log in once to submit finished Morning Roll turns.";
}

// ---------------------------------------------------------------- tracker login
async function trackerLogin(evt) {
  evt.preventDefault();
  const name = ui.player.value.trim();
  if (!name) { ui.trackerNote.textContent = "Type the player's name above first."; return; }
  try {
    const out = await api("/api/v1/tracker/tokens", {
      method: "POST",
      headers: { "content-type": "application/json" },
      // the token goes to the turn on this page only, never to another's under the same name
      body: JSON.stringify({ name, password: ui.password.value, turns: state.turn ? [state.turn.id] : [] }),
    });
    localStorage.setItem(`dicecam.token.${name}`, out.token);
    localStorage.setItem("dicecam.player", name); // the page opens with it, logged in
    ui.password.value = "";
    ui.trackerNote.textContent = `Logged in as ${out.player.name}: Morning Roll turns are submitted.`;
  } catch (err) {
    ui.trackerNote.textContent = err.status === 404
      ? "No tracker to submit to (dicecam serve --no-tracker, and no --tracker-url)."
      : `Tracker login failed: ${err.message}`;
  }
}

// ---------------------------------------------------------------- wiring
ui.trackerForm.addEventListener("submit", trackerLogin);
ui.turnForm.addEventListener("submit", newTurn);
ui.game.addEventListener("change", renderRules);
ui.startCamera.addEventListener("click", startCamera);
ui.capture.addEventListener("click", capture);
ui.pickPhoto.addEventListener("click", () => ui.file.click());
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
ui.useRoll.addEventListener("click", () => useRoll());
ui.retake.addEventListener("click", () => {
  state.reading = null; state.photo = null; state.live.taken = null;
  ui.readingPanel.hidden = true;
  if (state.stream) showPreview();
  focusFirst(rollControl());
});
ui.bank.addEventListener("click", bank);
ui.typedForm.addEventListener("submit", async (evt) => {
  evt.preventDefault();
  const tokens = ui.typed.value.split(/[\s,]+/).filter(Boolean);
  const values = tokens.map(Number);
  if (!tokens.length || tokens.some((t) => !/^[1-6]$/.test(t))) { // "0x1", "1e0", "+1": no
    say("Type the dice values as numbers 1 to 6, like 1 5 5 2 3 6.");
    return;
  }
  if (await sendRoll(null, { values })) ui.typed.value = ""; // else kept, to send again
});
ui.player.addEventListener("change", showLogin);
loadConfig().then(showLogin);
showHealth();
