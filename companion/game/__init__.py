"""The game's domain: cards, deck, chains, rules, scoring and the referee. No pixels here.

- `cards`, `deck`: card codes and the deck's composition (from calibration/deck.json).
- `chains`: a chain is a tuple of cards in physical order; canonical reading, open
  ends, completeness, `check_chain` (what a chain on the table breaks).
- `rules`: `legal_placements(table, card)`, what a placement breaks, and which
  unseen card could have completed snakes that vanished.
- `scoring`: total cards, then longest snake, else a shared win.
- `record`: the judge's input format, read strictly (`RecordError`).
- `referee`: `Referee.observe(table)` judges table after table; `judge_record`.
- `simulate`: seeded random games with known truth; `judge_cli`: `companion judge`.
"""
