// Building the page: h() makes an HTML element, s() an SVG one. Children that are not nodes go in
// as text nodes, never as markup, so names and event lines cannot inject anything.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "class" && Array.isArray(value)) {
      element.setAttribute("class", value.filter(Boolean).join(" "));
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: h("a", {href: "/"}, "matches"). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element: s("circle", {cx: 1, cy: 1, r: 1}). */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replace everything inside `parent` with `child`. */
export function replace(parent, child) {
  parent.replaceChildren(...(child ? [child] : []));
}

/** A time from microseconds since the epoch, in ISO 8601 and UTC (2026-11-23T20:15:03Z): the same
 * for every reader, whatever the browser's locale, as the command line prints it. */
export function when(us) {
  if (us === null || us === undefined) return "";
  return `${new Date(us / 1000).toISOString().slice(0, 19)}Z`;
}
