// One drawing function per game, by the name the drawing model carries in `game`; and, where a
// game has one, the drawing of a decision's best move over its board (the analysis's).

import { bestMove as backgammonBest, draw as backgammon } from "matchlog/boards/backgammon.js";
import { draw as davinci } from "matchlog/boards/davinci.js";
import { bestMove as fishBest, draw as fish } from "matchlog/boards/fish.js";
import { draw as knockout } from "matchlog/boards/knockout.js";
import { draw as porrinha } from "matchlog/boards/porrinha.js";

export const BOARDS = { backgammon, davinci, fish, knockout, porrinha };
export const OVERLAYS = { backgammon: backgammonBest, fish: fishBest };
