// One drawing function per game, by the name the drawing model carries in `game`.

import { draw as backgammon } from "matchlog/boards/backgammon.js";
import { draw as davinci } from "matchlog/boards/davinci.js";
import { draw as fish } from "matchlog/boards/fish.js";
import { draw as knockout } from "matchlog/boards/knockout.js";
import { draw as porrinha } from "matchlog/boards/porrinha.js";

export const BOARDS = { backgammon, davinci, fish, knockout, porrinha };
