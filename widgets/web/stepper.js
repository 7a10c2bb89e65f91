// The backward stepper's browser side (an anywidget ES module; no imports, no network).
//
// Python sends two things once: `scene`, the laid-out graph (widgets/scene.py), and
// `frames`, what every step of the recorded backward pass shows. This module draws the
// scene as SVG and steps through the frames by itself: a click restyles a few SVG
// elements and swaps the step panel's HTML, with no message to the kernel and back.
// The step on display is written to the model's `index`, so Python reads it too, and
// Python setting `index` moves the view.
const SVG = "http://www.w3.org/2000/svg";
const FONT = '"DejaVu Sans", "Bitstream Vera Sans", Verdana, sans-serif';
const ZOOMS = [0.25, 0.33, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2];
const STATUS_NAMES = { "-": "none", p: "pending", c: "current", d: "done", f: "failed" };

function make(tag, attrs, parent, ns) {
  const node = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

function svg(tag, attrs, parent) {
  return make(tag, attrs, parent, true);
}

function text(parent, content, x, y, size, anchor, fill) {
  const node = svg("text", { x, y, "font-size": size, "text-anchor": anchor, fill }, parent);
  node.textContent = content;
  return node;
}

function points(list) {
  return list.map((p) => p[0] + "," + p[1]).join(" ");
}

// Draw the scene once; return the elements a frame restyles.
function drawScene(scene, host) {
  const [vx, vy, vw, vh] = scene.view;
  const root = svg("svg", {
    class: "stepper-graph", viewBox: `${vx} ${vy} ${vw} ${vh}`, role: "img",
    "aria-label": "the backward graph at this step", "font-family": FONT,
  }, host);
  svg("rect", { x: vx, y: vy, width: vw, height: vh, fill: "#ffffff" }, root);
  const fonts = scene.fonts, palette = scene.palette;
  if (scene.title) {
    const [label, x, y, size] = scene.title;
    text(root, label, x, y, size, "start", palette.text);
  }
  const legend = svg("g", { class: "stepper-legend" }, root);
  for (const [label, face, edge, dash, width, x, y] of scene.legend) {
    svg("rect", { x, y: y - 6, width: 18, height: 12, rx: 2, fill: face, stroke: edge,
                  "stroke-width": width, "stroke-dasharray": dash || null }, legend);
    const baseline = y + (fonts.line / 2 - 0.3) * fonts.legend;
    text(legend, label, x + 24, baseline, fonts.legend, "start", "#343a40");
  }
  const edgeLayer = svg("g", { class: "stepper-edges", fill: "none" }, root);
  const edges = scene.edges.map((edge, i) => {
    const g = svg("g", { class: "mg-edge", "data-edge": i }, edgeLayer);
    const line = svg("polyline", { points: points(edge.points), stroke: palette.edge,
                                   "stroke-width": 1 }, g);
    const head = svg("polygon", { points: points(edge.head), fill: palette.edge }, g);
    return { g, line, head, active: false, label: null, text: null };
  });
  for (const [label, x, y] of scene.index_labels) {
    text(root, label, x, y + (fonts.line / 2 - 0.3) * fonts.edge, fonts.edge, "start",
         "#495057");
  }
  const links = svg("g", { stroke: "#adb5bd", "stroke-width": 0.8,
                           "stroke-dasharray": "1 2" }, root);
  for (const saved of scene.saved) {
    const [a, b] = saved.link;
    svg("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1] }, links);
  }
  const boxLayer = svg("g", { class: "stepper-nodes" }, root);
  const boxes = scene.boxes.map((box) => {
    const g = svg("g", { class: "mg-node", "data-key": box.key, "data-name": box.name },
                  boxLayer);
    const [x, y, w, h] = box.rect;
    const rect = svg("rect", { x, y, width: w, height: h, rx: 5 }, g);
    const label = svg("g", { fill: palette.text }, g);
    for (const [line, lx, ly] of box.lines) text(label, line, lx, ly, fonts.node, "middle");
    return { g, rect, label, look: null, status: null };
  });
  const savedLayer = svg("g", { class: "stepper-saved" }, root);
  const saved = scene.saved.map((item) => {
    const g = svg("g", { class: "mg-saved" }, savedLayer);
    const [x, y, w, h] = item.rect;
    const rect = svg("rect", { x, y, width: w, height: h, rx: 3 }, g);
    const label = text(g, "", item.text[0], item.text[1], fonts.saved, "middle");
    return { g, rect, label, item, released: null };
  });
  const labelLayer = svg("g", { class: "stepper-edge-labels", fill: palette.edge_active },
                         root);
  return { root, boxes, edges, saved, labelLayer, scene };
}

function restyleBox(box, look, code, scene) {
  box.g.setAttribute("data-status", STATUS_NAMES[code] || "none");
  if (box.look === look) return;
  box.look = look;
  const [face, edge, width, dash, alpha] = scene.looks[look];
  const r = box.rect;
  r.setAttribute("fill", face);
  r.setAttribute("fill-opacity", alpha);
  r.setAttribute("stroke", edge);
  r.setAttribute("stroke-opacity", Math.max(alpha, 0.6));
  r.setAttribute("stroke-width", width);
  if (dash) r.setAttribute("stroke-dasharray", dash);
  else r.removeAttribute("stroke-dasharray");
  box.label.setAttribute("fill-opacity", Math.max(alpha, 0.55));
}

function restyleSaved(saved, released, scene) {
  if (saved.released === released) return;
  saved.released = released;
  const name = released ? "released" : saved.item.look;
  const [face, edge, width, dash, color] = scene.saved_looks[name];
  const r = saved.rect;
  r.setAttribute("fill", face);
  r.setAttribute("stroke", edge);
  r.setAttribute("stroke-width", width);
  if (dash) r.setAttribute("stroke-dasharray", dash);
  else r.removeAttribute("stroke-dasharray");
  saved.label.setAttribute("fill", color);
  saved.label.textContent = released ? saved.item.released_label : saved.item.label;
}

// Apply one frame to the drawn scene, touching only what differs from the last one.
function applyFrame(drawn, frame) {
  const scene = drawn.scene;
  drawn.boxes.forEach((box, i) => {
    const code = frame.status[i] || "-";
    const looks = scene.boxes[i].looks;
    restyleBox(box, code in looks ? looks[code] : looks["-"], code, scene);
  });
  const lit = new Map(frame.edges.map((e) => [e[0], e]));
  const palette = scene.palette, fonts = scene.fonts;
  drawn.edges.forEach((edge, i) => {
    const on = lit.get(i);
    if (!!on !== edge.active) {
      edge.active = !!on;
      const color = on ? palette.edge_active : palette.edge;
      edge.line.setAttribute("stroke", color);
      edge.line.setAttribute("stroke-width", on ? 1.8 : 1);
      edge.head.setAttribute("fill", color);
      edge.g.setAttribute("data-active", on ? "1" : "0");
    }
    const wanted = on && on[1] ? on[1] : null;
    if (wanted === edge.text) return;
    edge.text = wanted;
    if (wanted === null) {
      if (edge.label) edge.label.remove();
      edge.label = null;
      return;
    }
    const baseline = on[3] + (fonts.line / 2 - 0.3) * fonts.edge;
    if (!edge.label) {
      edge.label = text(drawn.labelLayer, "", on[2], baseline, fonts.edge, "start");
      edge.label.setAttribute("data-edge", i);
    }
    edge.label.textContent = wanted;
  });
  const released = new Set(frame.released);
  drawn.saved.forEach((saved, i) => restyleSaved(saved, released.has(i), scene));
}

function button(parent, name, label, title) {
  const b = make("button", { type: "button", class: `stepper-${name}`, title }, parent);
  b.innerHTML = label;
  return b;
}

function render({ model, el }) {
  const scene = model.get("scene");
  const frames = model.get("frames");
  const last = frames.length - 1;
  const root = make("div", { class: "minigrad-stepper", tabindex: "0" }, el);
  const controls = make("div", { class: "stepper-controls" }, root);
  const first = button(controls, "first", "|&#x25C0; first", "before backward starts");
  const previous = button(controls, "previous", "&#x25C0; previous", "one node back");
  const play = button(controls, "play", "&#x25B6; play", "play / pause");
  const next = button(controls, "next", "next &#x25B6;", "run the next node");
  const end = button(controls, "last", "last &#x25B6;|", "backward to the end");
  const slider = make("input", { type: "range", class: "stepper-slider", min: 0, max: last,
                                 step: 1, value: 0, "aria-label": "backward step" },
                      controls);
  const caption = make("span", { class: "stepper-caption", "aria-live": "polite" }, controls);
  const zoomBox = make("span", { class: "stepper-zoom" }, controls);
  const zoomOut = button(zoomBox, "zoom-out", "&minus;", "zoom out");
  const zoomLabel = make("span", { class: "stepper-zoom-level" }, zoomBox);
  const zoomIn = button(zoomBox, "zoom-in", "+", "zoom in");
  const toggle = button(controls, "toggle-panel", "panel &#x25E8;", "hide / show the step panel");
  toggle.setAttribute("aria-pressed", "true");
  const body = make("div", { class: "stepper-body" }, root);
  const picture = make("div", { class: "stepper-picture" }, body);
  const side = make("div", { class: "stepper-side" }, body);
  const panel = make("div", { class: "stepper-panel" }, side);
  const grads = make("div", { class: "stepper-grads" }, side);
  const drawn = drawScene(scene, picture);

  let zoom = 1;
  function setZoom(value) {
    zoom = value;
    const scale = scene.px_per_pt * zoom;
    drawn.root.setAttribute("width", (scene.view[2] * scale).toFixed(1));
    drawn.root.setAttribute("height", (scene.view[3] * scale).toFixed(1));
    zoomLabel.textContent = Math.round(zoom * 100) + "%";
    zoomOut.disabled = zoom <= ZOOMS[0];
    zoomIn.disabled = zoom >= ZOOMS[ZOOMS.length - 1];
  }
  setZoom(1);
  const zoomBy = (up) => setZoom(up ? ZOOMS.find((z) => z > zoom + 1e-9) || zoom
                                     : [...ZOOMS].reverse().find((z) => z < zoom - 1e-9) || zoom);
  zoomIn.onclick = () => zoomBy(true);
  zoomOut.onclick = () => zoomBy(false);
  // Ctrl (or Cmd) + wheel zooms; a plain wheel scrolls the notebook as usual.
  picture.addEventListener("wheel", (event) => {
    if (!event.ctrlKey && !event.metaKey) return;
    event.preventDefault();
    zoomBy(event.deltaY < 0);
  }, { passive: false });
  // Drag the graph to pan it (a graph larger than its box keeps its text size).
  let drag = null;
  picture.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: picture.scrollLeft,
             top: picture.scrollTop, id: event.pointerId };
    picture.classList.add("stepper-dragging");
  });
  picture.addEventListener("pointermove", (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    picture.scrollLeft = drag.left - (event.clientX - drag.x);
    picture.scrollTop = drag.top - (event.clientY - drag.y);
  });
  const endDrag = () => { drag = null; picture.classList.remove("stepper-dragging"); };
  picture.addEventListener("pointerup", endDrag);
  picture.addEventListener("pointerleave", endDrag);
  // The step panel folds away, leaving the graph the whole width.
  toggle.onclick = () => {
    const hidden = root.classList.toggle("stepper-panel-hidden");
    toggle.setAttribute("aria-pressed", hidden ? "false" : "true");
  };

  // Keep the node of this step in sight when the graph is larger than its box.
  // Before backward, the root (the first box) is the node to see.
  function reveal(frame) {
    const i = Math.max(frame.status.search(/[cf]/), 0);
    const [x, y, w, h] = scene.boxes[i].rect;
    const scale = scene.px_per_pt * zoom;
    const left = (x - scene.view[0]) * scale, top = (y - scene.view[1]) * scale;
    const width = w * scale, height = h * scale;
    if (left < picture.scrollLeft || left + width > picture.scrollLeft + picture.clientWidth) {
      picture.scrollLeft = left + width / 2 - picture.clientWidth / 2;
    }
    if (top < picture.scrollTop || top + height > picture.scrollTop + picture.clientHeight) {
      picture.scrollTop = top + height / 2 - picture.clientHeight / 2;
    }
  }

  let index = -1;
  function show(i, sync) {
    const began = performance.now();
    i = Math.max(0, Math.min(last, Math.round(Number(i)) || 0));
    if (i !== index) {
      index = i;
      const frame = frames[i];
      applyFrame(drawn, frame);
      panel.innerHTML = frame.panel;
      grads.innerHTML = frame.grads;
      caption.textContent = frame.caption;
      slider.value = String(i);
      first.disabled = previous.disabled = i === 0;
      next.disabled = end.disabled = i === last;
      root.dataset.index = String(i);
      reveal(frame);
    }
    root.dataset.frameMs = (performance.now() - began).toFixed(2);
    if (timer !== null) played.add(i);
    if (sync && model.get("index") !== i) {
      model.set("index", i);
      model.save_changes();
    }
  }

  let timer = null;
  const played = new Set();  // the steps this view showed while playing
  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    play.innerHTML = "&#x25B6; play";
  }
  const step = (i) => { stop(); show(i, true); };
  first.onclick = () => step(0);
  previous.onclick = () => step(index - 1);
  next.onclick = () => step(index + 1);
  end.onclick = () => step(last);
  slider.addEventListener("input", () => step(slider.value));
  play.onclick = () => {
    if (timer !== null) { stop(); return; }
    if (index === last) show(0, true);
    play.innerHTML = "&#x275A;&#x275A; pause";
    played.clear();
    played.add(index);
    timer = setInterval(() => {
      show(index + 1, true);
      if (index >= last) stop();
    }, model.get("interval_ms") || 900);
  };
  root.addEventListener("keydown", (event) => {
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: last };
    if (event.target === root && event.key in moves) {
      event.preventDefault();
      step(moves[event.key]);
    }
  });
  // Side by side when there is room; the panel moves under the graph in a narrow output.
  if (typeof ResizeObserver !== "undefined") {
    const observer = new ResizeObserver(() => {
      root.classList.toggle("stepper-narrow", root.clientWidth > 0 && root.clientWidth < 720);
    });
    observer.observe(root);
    root._observer = observer;
  }
  // Another view of this widget (the same output shown twice), or Python, moved the
  // step: follow it, and stop playing here rather than fight over the step.
  // (A step this view sent itself may come back late, as an echo from the kernel: that
  // does not stop it.)
  const onChange = () => {
    const wanted = model.get("index");
    if (timer !== null && !played.has(wanted)) stop();
    show(wanted, false);
  };
  model.on("change:index", onChange);
  show(model.get("index") || 0, false);
  return () => {
    stop();
    model.off("change:index", onChange);
    if (root._observer) root._observer.disconnect();
  };
}

export default { render };
