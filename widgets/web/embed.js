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

  var modules = {}, styled = {}, models = {};

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

  function renderView(script, saved) {
    var view;
    try { view = JSON.parse(script.textContent); } catch (e) { return null; }
    var entry = saved[view && view.model_id];
    if (!entry || entry.model_name !== "AnyModel" || !entry.state || !entry.state._esm) {
      return null;
    }
    var state = entry.state;
    var model = models[view.model_id] = models[view.model_id] || new Model(state);
    var el = document.createElement("div");
    el.className = "anywidget-static";
    script.parentNode.insertBefore(el, script.nextSibling);
    script.setAttribute("data-rendered", "1");
    addStyle(state._anywidget_id || view.model_id, state._css);
    return widgetModule(state._esm).then(function (widget) {
      return widget.render({ model: model, el: el });
    }).catch(function (error) {
      el.textContent = "This widget could not be shown: " + error;
    });
  }

  function renderAll() {
    var saved = {};
    document.querySelectorAll(STATE).forEach(function (script) {
      try { Object.assign(saved, JSON.parse(script.textContent).state || {}); } catch (e) {}
    });
    var pending = [];
    document.querySelectorAll(VIEW).forEach(function (script) {
      if (!script.hasAttribute("data-rendered")) pending.push(renderView(script, saved));
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
