// The match page (and an exported file): a controller over the page's data source, the views
// mounted once, and a redraw batched to one per turn of the event loop.

import { FileSource, ServerSource } from "matchlog/api.js";
import { ReplayCtrl } from "matchlog/ctrl.js";
import { mountMatch } from "matchlog/view.js";

function integer(text) {
  if (text === null || text.trim() === "") return undefined;
  const value = Number(text);
  return Number.isInteger(value) ? value : undefined;
}

/** Mount the viewer in `root`: `config.data` is an exported file's match, else `config.match` is
 * the id of a match on this service. */
export function mount(root, config) {
  const source = config.data ? new FileSource(config.data) : new ServerSource(config.match);
  let update = () => {};
  let pending = false;
  const ctrl = new ReplayCtrl(source, () => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      update();
    });
  });
  update = mountMatch(root, ctrl);
  const params = new URLSearchParams(location.search);
  ctrl.start(integer(params.get("seq")), integer(params.get("as_seat")), integer(params.get("side")));
}
