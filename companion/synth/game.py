"""A whole simulated game filmed over the table: frames, a video and the truth.

The referee's simulator (`companion.game.simulate`) decides what happens;
`plan.plan_game` lays the game on the table (`film`) and turns it into shots
(`director`) without drawing; this module draws the shots (`draw`), with a
tiny wandering camera shake, exposure drift and fresh sensor noise per frame,
and writes the frames, the video and `truth.json`.
"""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from .draw import draw
from .plan import plan_game
from .truth import shot_truth

VIDEO_NAME = "game.avi"          # Motion-JPEG in AVI: this OpenCV build writes and reads it back


def render_game(out_dir, players: int | list[str], seed: int, tier: str = "medium", style: str | None = None,
                fps: int = 10, size: tuple[int, int] | None = (1280, 720), illegal_rate: float = 0.0,
                max_frames: int | None = None, video: bool = True, draw_pile: bool = False) -> Path:
    """Film a simulated game into out_dir; returns the path of truth.json.

    `draw_pile` lays the face-down draw pile on the table as a fan that thins
    out as cards are drawn (its cards are `back` in the settled truth).

    `max_frames` films only the first record frames (a short sample); the
    truth then covers exactly those frames.
    """
    from companion.game.scoring import rank_winners, score_piles

    plan = plan_game(players, seed, tier, style, fps, size, illegal_rate, max_frames, draw_pile)
    world, director, sim, frames, names = plan.world, plan.director, plan.sim, plan.frames, plan.names
    style, starts, rngs, size = plan.style, plan.starts, plan.rngs, plan.world.size

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("frame_*.jpg"):
        old.unlink()
    shake_rng, sensor = rngs["camera"], rngs["sensor"]
    look = world.look
    writer = None
    frame_info = []
    if video:
        writer = cv2.VideoWriter(str(out / VIDEO_NAME), cv2.VideoWriter_fourcc(*"MJPG"), float(fps), size)
        if not writer.isOpened():
            raise OSError("this OpenCV cannot write Motion-JPEG AVI video")
    shake = np.zeros(2)
    for i, shot in enumerate(director.shots):
        look = look.drifted(sensor, within=world.tier.exposure)
        shake = shake * 0.7 + shake_rng.normal(0, 0.25, 2)       # a tiny, wandering camera shake
        sh = (float(shake[0]), float(shake[1]))
        name = f"frame_{i:06d}.jpg"
        truth, ids = shot_truth(world, shot, name, shake=sh)
        frame = draw(world, shot.items, ids, sensor, look=look, shake=sh)
        (out / name).write_bytes(frame.jpeg)
        if writer is not None:
            writer.write(frame.image)
        frame_info.append({"index": i, "file": name, "record_frame": shot.settled_frame,
                           "truth": truth if shot.settled_frame is not None else None})
    if writer is not None:
        writer.release()

    first_settled: dict[int, int] = {}
    for f in frame_info:
        if f["record_frame"] is not None:
            first_settled.setdefault(f["record_frame"], f["index"])
    n = len(frames)
    moves = [dict(m, video_start=starts.get(m["frame"], 0), video_frame=first_settled[m["frame"]])
             for m in sim.truth["moves"] if m["frame"] < n]
    if n == len(sim.frames):
        record, piles, scores, winners = sim.record, sim.truth["piles"], sim.truth["scores"], sim.truth["winners"]
    else:
        record = dict(sim.record, frames=sim.record["frames"][:n], finished=False)
        piles_cards = sim.piles_after[n - 1]
        piles = {p: [[c.code for c in s] for s in snakes] for p, snakes in piles_cards.items()}
        scores = score_piles(piles_cards)
        winners = rank_winners(scores)
    truth = {
        "players": names, "seed": int(seed), "tier": tier, "style": style, "fps": int(fps),
        "size": list(size), "video": VIDEO_NAME if video else None,
        "record": record, "moves": moves, "piles": piles, "scores": scores, "winners": winners,
        "injected": [list(x) for x in sim.injected if x[0] < n],
        "record_frames": [{"record_frame": k, "first_video_frame": first_settled[k],
                           "last_video_frame": max(f["index"] for f in frame_info if f["record_frame"] == k)}
                          for k in range(n)],
        "frames": frame_info,
    }
    path = out / "truth.json"
    path.write_text(json.dumps(truth) + "\n", encoding="utf-8")
    return path
