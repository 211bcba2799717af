"""The game's domain: cards, deck, chains, rules, scoring and the referee. No pixels here."""
