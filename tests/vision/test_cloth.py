"""A patterned cloth's cells are card-shaped but repeat around themselves; cards do not."""
import cv2
import numpy as np

from companion.vision.cloth import cloth_cells

DARK, LIGHT = (40, 70, 40), (60, 170, 220)    # BGR: a dark green and orange gingham, as under a lamp


def _gingham(cell: int, seed: int, shape=(480, 640)):
    """A gingham of `cell`-px squares, turned a little; the dark squares' corners, and the picture."""
    rng = np.random.default_rng(seed)
    h, w = shape
    y, x = np.mgrid[:h, :w].astype(np.float32)
    a = np.radians(rng.uniform(-20, 20))
    u, v = x * np.cos(a) + y * np.sin(a), -x * np.sin(a) + y * np.cos(a)
    sx, sy = (u // cell) % 2, (v // cell) % 2
    mix = (0.5 * (sx + sy))[..., None]
    img = (np.array(LIGHT) * (1 - mix) + np.array(DARK) * mix).astype(np.float32)
    img = np.clip(img + rng.normal(0, 3, img.shape), 0, 255).astype(np.uint8)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    dark = []
    for i in range(-20, 40):
        for j in range(-20, 40):
            if i % 2 and j % 2:
                local = np.array([[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]], float) * cell
                corners = local @ rot.T
                if corners.min() > 100 and corners[:, 0].max() < w - 100 and corners[:, 1].max() < h - 100:
                    dark.append(corners)
    return img, dark


def _card(img, centre, angle, art):
    corners = cv2.boxPoints((centre, (44, 64), angle)).astype(np.float64)
    cv2.fillConvexPoly(img, np.round(corners).astype(np.int32), (190, 215, 230), cv2.LINE_AA)
    if art == "body":
        c = np.array(centre)
        cv2.ellipse(img, (int(c[0]), int(c[1])), (8, 26), angle, 0, 360, (40, 60, 200), -1, cv2.LINE_AA)
    else:   # a back: a spiral on green
        cv2.fillConvexPoly(img, np.round(corners).astype(np.int32), (60, 110, 50), cv2.LINE_AA)
        cv2.circle(img, (int(centre[0]), int(centre[1])), 12, (80, 200, 230), 2, cv2.LINE_AA)
    return corners


def test_a_gingham_s_dark_squares_are_cells_of_the_cloth():
    for seed in range(3):
        img, dark = _gingham(22, seed)
        assert len(dark) >= 10
        cells = cloth_cells(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), dark[:10])
        assert sum(cells) >= 9, cells


def test_cards_on_the_gingham_are_not_its_cells():
    for seed in range(3):
        img, _ = _gingham(22, seed)
        cards = [_card(img, (160, 150), 10, "body"), _card(img, (330, 300), -25, "back"),
                 _card(img, (480, 160), 40, "body")]
        assert cloth_cells(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cards) == [False] * 3


def test_a_plain_quad_on_a_plain_table_is_not_taken_for_a_cell():
    img = np.full((300, 400), 120, np.uint8)
    quad = cv2.boxPoints(((200, 150), (40, 60), 0)).astype(np.float64)
    assert cloth_cells(img, [quad]) == [False]


def test_the_analyzer_drops_cells_read_as_backs_but_keeps_faces_unknowns_and_cards():
    from companion.vision.analyze import without_cloth
    from companion.vision.outline import CardOutline
    from companion.vision.recognise import CardReading

    img, dark = _gingham(22, 0)
    card = _card(img, (330, 300), -25, "back")

    def reading(corners, kind):
        return CardReading(CardOutline(corners, 0.9), kind, [], [], 0.9, {}, ())

    readings = [reading(dark[0], "back"), reading(dark[1], "unknown"), reading(dark[2], "middle"),
                reading(card, "back")]
    kept = without_cloth(img, readings)
    # (another game's cards laid out in a grid repeat around each other too: unknowns stay)
    assert [r.kind for r in kept] == ["unknown", "middle", "back"]
    assert kept[2].outline.corners is card


def _reading(corners, kind):
    from companion.vision.outline import CardOutline
    from companion.vision.recognise import CardReading
    return CardReading(CardOutline(corners, 0.9), kind, [], [], 0.9, {}, ())


def test_cells_read_as_unknown_are_dropped_beside_faces_of_a_card_s_size():
    from companion.vision.analyze import without_cloth

    img, dark = _gingham(22, 1)
    face = _card(img, (330, 300), -25, "body")
    readings = [_reading(face, "middle"), _reading(dark[0], "unknown"), _reading(dark[3], "unknown")]
    kept = without_cloth(img, readings)
    assert [r.kind for r in kept] == ["middle"]


def test_another_game_s_cards_in_a_grid_stay_though_they_repeat():
    from companion.vision.analyze import without_cloth

    img = np.full((480, 640, 3), (90, 120, 150), np.uint8)
    grid = []
    for row in range(3):
        for col in range(4):
            corners = _card(img, (130 + 110 * col, 110 + 120 * row), 0, "back")
            grid.append(corners)
    face = _card(img, (580, 420), 0, "body")
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    assert cloth_cells(gray, [grid[5]]) == [True]   # the middle of the grid repeats as a cloth would
    readings = [_reading(q, "unknown") for q in grid] + [_reading(face, "middle")]
    assert len(without_cloth(img, readings)) == len(readings)


def test_on_a_rendered_gingham_its_squares_are_not_reported_as_foreign_cards(analyzer, monkeypatch,
                                                                             development_table):
    """A 4K table on a gingham: the finder outlines dozens of its squares, the recogniser
    calls them `unknown`; beside the snakes' cards they are the cloth."""
    import companion.vision.analyze as analyze
    from companion.bench.metrics import match_cards

    scene, image, _ = development_table(13, "hard", 2)
    card_area = np.median([cv2.contourArea(np.float32(c["corners"])) for c in scene.truth["cards"]])

    def cells_found():
        """Unmatched `unknown`s the size of the cloth's squares (a tenth of a card), not of a card."""
        found = analyzer.analyze(image)["cards"]
        matched = set(match_cards(scene.truth["cards"], found).values())
        return [c for c in found if c["kind"] == "unknown" and c["id"] not in matched
                and cv2.contourArea(np.float32(c["corners"])) < 0.25 * card_area]

    assert cells_found() == []
    monkeypatch.setattr(analyze, "TILE_AREA", 0.0)
    assert len(cells_found()) >= 10
