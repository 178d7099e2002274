// The replay controller, after lichess's analysis board: one state object, methods that move
// through it, and `redraw()` after every change; the views read it and never change it.
//
// It holds one view of one match at a time (an `as_seat`: null the whole record, -1 a spectator,
// K a seat): that view's event lines, the frames fetched so far, and where the reader is. Switching
// the view drops everything of the old one, so the page never holds two views at once.

/** Autoplay speeds: milliseconds a step. */
export const SPEEDS = [
  ["slow", 2000],
  ["normal", 1000],
  ["fast", 400],
  ["fastest", 100],
];

/** How many frames one request fetches around the seq being shown. */
const WINDOW = 200;

export class ReplayCtrl {
  constructor(source, redraw) {
    this.source = source;
    this.redraw = redraw;
    this.info = null;
    this.views = [];
    this.view = null;
    this.lines = [];
    this.frames = new Map();
    this.findings = [];
    this.analysis = null; // the annotations as this view sees them, with summaries and the graph
    this.seq = 0;
    this.side = null; // the seat a board is drawn from (backgammon); null: the seat viewed, else seat 0
    this.playing = false;
    this.speed = 1000;
    this.live = false; // following a running match's stream
    this.connected = false;
    this.following = true; // at the last seq: new events move the board on
    this.error = null;
    this.generation = 0; // bumped whenever the view changes: late answers for an old one are dropped
    this.stopFollowing = null;
    this.timer = null;
    this.fetching = new Set();
  }

  get last() {
    return this.lines.length - 1;
  }

  get frame() {
    return this.frames.get(this.seq) ?? null;
  }

  /** The seat the board is drawn from: the one chosen, else the seat viewed, else seat 0. */
  get drawnFrom() {
    if (this.side !== null) return this.side;
    return this.view !== null && this.view >= 0 && this.view < 2 ? this.view : 0;
  }

  /** Draw the board from the other side. */
  flip() {
    this.side = 1 - this.drawnFrom;
    this.remember();
    this.redraw();
  }

  /** Open the match at `seq` (default: the last) as `view` (undefined: the fullest the reader may
   * have), its board drawn from `side` (undefined: the seat viewed, else seat 0). */
  async start(seq, view, side) {
    if (side === 0 || side === 1) this.side = side;
    try {
      this.info = await this.source.info();
      const allowed = await this.source.views();
      this.views = allowed.views;
      await this.load(view === undefined ? allowed.default : view, seq);
    } catch (error) {
      this.fail(error);
    }
  }

  fail(error) {
    this.error = error;
    this.stop();
    this.redraw();
  }

  /** Show the match as `view`, at `seq` (default: the last). */
  async load(view, seq) {
    const generation = ++this.generation;
    this.closeStream();
    this.view = view;
    this.error = null;
    this.lines = [];
    this.frames = new Map();
    this.findings = [];
    this.analysis = null;
    this.redraw();
    try {
      const lines = await this.source.lines(view);
      if (generation !== this.generation) return;
      this.lines = lines;
      const target = seq === null || seq === undefined ? this.last : Math.max(0, Math.min(seq, this.last));
      await this.jump(target);
      if (this.info.status === "running" && this.source.canFollow) this.openStream();
      this.loadFindings(generation);
      this.loadAnalysis(generation);
    } catch (error) {
      if (generation === this.generation) this.fail(error);
    }
  }

  async loadAnalysis(generation) {
    try {
      const analysis = await this.source.analysis(this.view);
      if (generation !== this.generation) return;
      this.analysis = analysis;
      this.redraw();
    } catch (error) {
      // The analysis is extra: the replay goes on without it.
    }
  }

  async loadFindings(generation) {
    try {
      const report = await this.source.audit(this.view);
      if (generation !== this.generation) return;
      // Findings speak of the whole record: a narrower view keeps only where and which rule.
      this.findings = report.findings
        .filter((finding) => finding.seq !== null)
        .map((finding) => (this.view === null ? finding : { seq: finding.seq, rule: finding.rule }));
      this.redraw();
    } catch (error) {
      // The audit is extra: the replay goes on without its marks.
    }
  }

  /** Show `seq`; a step the reader takes (not one the stream brings) decides whether to follow. */
  async jump(seq) {
    if (this.last < 0) return;
    this.seq = Math.max(0, Math.min(seq, this.last));
    this.following = this.seq === this.last;
    this.remember();
    this.redraw();
    await this.ensure(this.seq);
  }

  first() {
    return this.jump(0);
  }

  back() {
    return this.jump(this.seq - 1);
  }

  forward() {
    return this.jump(this.seq + 1);
  }

  end() {
    return this.jump(this.last);
  }

  /** Fetch the frames around `seq` unless they are here (or on their way). */
  async ensure(seq) {
    if (this.frames.has(seq)) {
      this.prefetch(seq);
      return;
    }
    let start = Math.max(0, seq - WINDOW / 4);
    let stop = Math.min(this.last, seq + (3 * WINDOW) / 4);
    while (start < seq && this.frames.has(start)) start += 1;
    while (stop > seq && this.frames.has(stop)) stop -= 1;
    await this.fetchFrames(start, stop);
  }

  prefetch(seq) {
    const ahead = Math.min(this.last, seq + WINDOW / 4);
    const behind = Math.max(0, seq - WINDOW / 8);
    if (!this.frames.has(ahead)) this.ensure(ahead);
    else if (!this.frames.has(behind)) this.ensure(behind);
  }

  async fetchFrames(start, stop) {
    const key = `${start}-${stop}`;
    if (this.fetching.has(key)) return;
    this.fetching.add(key);
    const generation = this.generation;
    try {
      const got = await this.source.frames(this.view, start, stop);
      if (generation !== this.generation) return;
      for (const frame of got) this.frames.set(frame.seq, frame);
      this.redraw();
    } catch (error) {
      if (generation === this.generation) this.fail(error);
    } finally {
      this.fetching.delete(key);
    }
  }

  /** Keep `?seq=` (and the view) in the address, so the position can be shared. */
  remember() {
    try {
      const url = new URL(location.href);
      url.searchParams.set("seq", this.seq);
      if (this.view === null) url.searchParams.delete("as_seat");
      else url.searchParams.set("as_seat", this.view);
      if (this.side === null) url.searchParams.delete("side");
      else url.searchParams.set("side", this.side);
      history.replaceState(null, "", url);
    } catch (error) {
      // Some file:// pages may not rewrite their address; stepping works without it.
    }
  }

  setView(view) {
    this.stop();
    return this.load(view, this.seq);
  }

  // -- autoplay ---------------------------------------------------------------------------------

  play() {
    if (this.playing) return;
    if (this.seq >= this.last && !this.live) this.seq = -1; // from the start when at the end
    this.playing = true;
    this.tick();
  }

  stop() {
    this.playing = false;
    clearTimeout(this.timer);
    this.timer = null;
    this.redraw();
  }

  togglePlay() {
    if (this.playing) this.stop();
    else this.play();
  }

  setSpeed(ms) {
    this.speed = ms;
    this.redraw();
  }

  tick() {
    if (!this.playing) return;
    if (this.seq < this.last) this.jump(this.seq + 1);
    else if (!this.live) {
      this.stop();
      return;
    }
    this.timer = setTimeout(() => this.tick(), this.speed);
    this.redraw();
  }

  // -- live -------------------------------------------------------------------------------------

  openStream() {
    const generation = this.generation;
    this.live = true;
    this.stopFollowing = this.source.follow(this.view, this.lines.length, {
      line: (line) => generation === this.generation && this.arrived(line),
      end: () => generation === this.generation && this.ended(),
      state: (open) => {
        if (generation !== this.generation) return;
        this.connected = open;
        this.redraw();
      },
    });
  }

  closeStream() {
    if (this.stopFollowing) this.stopFollowing();
    this.stopFollowing = null;
    this.live = false;
    this.connected = false;
  }

  arrived(line) {
    if (line.seq !== this.lines.length) return; // already here (a reconnect sends from Last-Event-ID)
    this.lines.push(line);
    if (line.type === "match.undone") {
      const seqs = new Set(line.event.seqs);
      for (const taken of seqs) {
        if (!this.lines[taken]) continue;
        this.lines[taken].undone_by = line.seq;
        // A line taken back no longer goes on one that stands.
        if (!seqs.has(taken - 1)) this.lines[taken].joins = false;
      }
    }
    if (this.following) this.jump(line.seq);
    else this.redraw();
  }

  async ended() {
    this.closeStream();
    try {
      this.info = await this.source.info();
    } catch (error) {
      // The match is over either way; its catalogue row will say so next time.
    }
    this.loadFindings(this.generation);
    this.loadAnalysis(this.generation);
    this.redraw();
  }
}
