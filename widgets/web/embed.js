// Shows the course's anywidget widgets on a page with no kernel and no network: an HTML
// export of a notebook (nbconvert, widget state embedded) or the course site.
//
// The page holds the notebook's widget state (a script of type
// application/vnd.jupyter.widget-state+json) and, where each widget was displayed, a
// script of type application/vnd.jupyter.widget-view+json naming its model. For each
// view of an anywidget model, this loader imports the widget's own ES module (its `_esm`,
// part of the state) from a blob: URL, adds its `_css`, and calls its `render` with a
// small model holding the saved state. Changes stay in the page (there is no kernel).
(function () {
  "use strict";
  // A page with several fragments (widgets.embed.state_html) runs this more than once:
  // the first copy draws every view, the others only those added since.
  if (window.minigradRenderWidgets) {
    if (document.readyState !== "loading") window.minigradRenderWidgets();
    return;
  }
  var STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

  function Model(state) {
    this.state = Object.assign({}, state);
    this.listeners = {};
  }
  Model.prototype.get = function (name) { return this.state[name]; };
  Model.prototype.set = function (name, value) {
    var old = this.state[name];
    this.state[name] = value;
    if (old !== value) this.emit("change:" + name);
  };
  Model.prototype.save_changes = function () {};
  Model.prototype.send = function () {};
  Model.prototype.on = function (name, callback) {
    (this.listeners[name] = this.listeners[name] || []).push(callback);
  };
  Model.prototype.off = function (name, callback) {
    var list = this.listeners[name] || [];
    this.listeners[name] = callback ? list.filter(function (c) { return c !== callback; }) : [];
  };
  Model.prototype.emit = function (name) {
    (this.listeners[name] || []).slice().forEach(function (callback) { callback(); });
  };

  var modules = {}, styled = {}, models = {}, copies = new Map();

  function widgetModule(esm) {
    if (!modules[esm]) {
      var url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
      modules[esm] = import(url).then(function (module) {
        var widget = module.default || module;
        return typeof widget === "function" ? widget() : widget;
      });
    }
    return modules[esm];
  }

  function addStyle(id, css) {
    if (!css || styled[id]) return;
    styled[id] = true;
    var style = document.createElement("style");
    style.setAttribute("data-anywidget", id);
    style.textContent = css;
    document.head.appendChild(style);
  }

  // A view's model: the one its state script describes. nbconvert's export keeps one
  // state script for the page, so two views of one widget share a model and step
  // together, as in Jupyter. A page made of fragments (`state_html`) has a state script
  // per view: two fragments of the same widget in the same state share a model too, but
  // two saved at different times (another start step, say) are two models, even under
  // one model id, and each steps alone.
  function modelFor(id, states) {
    var found = null;
    states.forEach(function (entry) {
      if (entry.state[id]) found = entry;  // the last one before the view wins
    });
    if (!found) return null;
    var saved = found.state[id];
    if (!saved || saved.model_name !== "AnyModel" || !saved.state || !saved.state._esm) {
      return null;
    }
    var key = id + " " + found.copy;
    if (!models[key]) models[key] = { model: new Model(saved.state), state: saved.state };
    return models[key];
  }

  function renderView(script, states) {
    var view;
    try { view = JSON.parse(script.textContent); } catch (e) { return null; }
    var before = states.filter(function (entry) {
      return entry.script.compareDocumentPosition(script) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    var found = view && (modelFor(view.model_id, before) || modelFor(view.model_id, states));
    if (!found) return null;
    var state = found.state;
    var el = document.createElement("div");
    el.className = "anywidget-static";
    script.parentNode.insertBefore(el, script.nextSibling);
    script.setAttribute("data-rendered", "1");
    addStyle(state._anywidget_id || view.model_id, state._css);
    return widgetModule(state._esm).then(function (widget) {
      return widget.render({ model: found.model, el: el });
    }).catch(function (error) {
      el.textContent = "This widget could not be shown: " + error;
    });
  }

  function renderAll() {
    var states = [];
    document.querySelectorAll(STATE).forEach(function (script) {
      var text = script.textContent;
      // scripts of the same text are copies of one saved state
      if (!copies.has(text)) copies.set(text, copies.size);
      try {
        states.push({ script: script, copy: copies.get(text), state: JSON.parse(text).state || {} });
      } catch (e) {}
    });
    var pending = [];
    document.querySelectorAll(VIEW).forEach(function (script) {
      if (!script.hasAttribute("data-rendered")) pending.push(renderView(script, states));
    });
    return Promise.all(pending);
  }

  window.minigradRenderWidgets = renderAll;
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderAll);
  } else {
    renderAll();
  }
}());
