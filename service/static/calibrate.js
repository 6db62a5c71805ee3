// dicecam camera page: calibration of a fixed camera (the playing-surface boundary).
// Takes the camera frame (or a chosen photo), shows the learned outline as a proposal, and lets
// the user tap the corners of the surface; Save stores them with PUT /api/v1/calibration.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const ui = {
    start: $("calibrate"), pick: $("calib-pick"), file: $("calib-file"), remove: $("calib-remove"),
    status: $("calib-status"), editor: $("calib-editor"), canvas: $("calib-canvas"),
    proposal: $("calib-proposal"), undo: $("calib-undo"), clear: $("calib-clear"),
    save: $("calib-save"), close: $("calib-close"), note: $("calib-note"), video: $("preview"),
  };
  const cal = {
    image: null,      // ImageBitmap of the photo being calibrated
    name: null,       // its file name, kept with the calibration
    width: 0, height: 0,
    proposal: null,   // learned outline [[x, y], ...] in image pixels, or null
    points: [],       // the corners tapped so far, image pixels
    stored: null,     // the stored calibration (normalised points), or null
  };
  window.dicecamCalibration = cal; // for the console and tests

  async function call(path, options = {}) {
    const res = await fetch(path, options);
    let body = null;
    try { body = await res.json(); } catch (_) { body = null; }
    if (!res.ok) {
      const detail = body && body.detail ? body.detail : `${res.status} ${res.statusText}`;
      throw new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
    }
    return body;
  }

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
      showStatus(await call("/api/v1/calibration"));
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
    cal.proposal = null;
    ui.editor.hidden = false;
    ui.note.textContent = "Tap the corners of the playing surface, in order around it.";
    draw();
    const form = new FormData();
    form.append("photo", blob, name);
    try {
      const out = await call("/api/v1/calibration/proposal", { method: "POST", body: form });
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
      g.fillStyle = "#dc2626";
      g.beginPath(); g.arc(x, y, lw * 3, 0, 2 * Math.PI); g.fill();
      g.fillStyle = "#fff";
      g.fillText(String(i + 1), x + lw * 3, y - lw * 3);
    });
    ui.undo.disabled = !cal.points.length;
    ui.clear.disabled = !cal.points.length;
    ui.save.disabled = cal.points.length < 3;
  }

  function tap(evt) {
    const c = ui.canvas;
    const r = c.getBoundingClientRect();
    const x = ((evt.clientX - r.left) * c.width) / r.width;
    const y = ((evt.clientY - r.top) * c.height) / r.height;
    const clamp = (v, hi) => Math.round(Math.min(Math.max(v, 0), hi) * 10) / 10;
    cal.points.push([clamp(x, c.width), clamp(y, c.height)]);
    const n = cal.points.length;
    ui.note.textContent = n < 3 ? `${n} corner${n === 1 ? "" : "s"}: tap at least 3.` : `${n} corners: Save when the outline fits.`;
    draw();
  }

  async function save() {
    try {
      const view = await call("/api/v1/calibration", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ points: cal.points, width: cal.width, height: cal.height, image: cal.name }),
      });
      showStatus(view);
      cal.points = [];
      ui.note.textContent = "Saved: dice outside this boundary are off the table from the next photo on.";
      draw();
    } catch (err) {
      ui.note.textContent = `Not saved: ${err.message}`;
    }
  }

  async function remove() {
    try {
      const view = await call("/api/v1/calibration", { method: "DELETE" });
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
    if (cal.proposal) { cal.points = cal.proposal.map(([x, y]) => [x, y]); draw(); }
  });
  ui.undo.addEventListener("click", () => { cal.points.pop(); draw(); });
  ui.clear.addEventListener("click", () => { cal.points = []; draw(); });
  ui.save.addEventListener("click", save);
  ui.remove.addEventListener("click", remove);
  ui.close.addEventListener("click", () => { ui.editor.hidden = true; ui.note.textContent = ""; });
  refresh();
})();
