"""Dudo (liar's dice), a game with chance and hidden information, as a matchlog plugin.

`dudo.game.GAME` is what the `matchlog.games` entry point registers; `dudo.engine` holds the rules,
`dudo.events` the events, `dudo.board` and `board.js` the viewer's drawing, `dudo.players` a
built-in player, `dudo.encoding` its tensors and action indices for learners.
"""
