"""`companion analyze`: pictures in, tables out (JSON Lines or a short summary)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .imageio import ImageLoadError, image_paths, load_image


def summary(result: dict) -> str:
    cards = result["cards"]
    kinds: dict[str, int] = {}
    for c in cards:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    parts = [f"{n} {k}" for k, n in sorted(kinds.items())]
    lines = [f'{result["image"]["path"]}: {len(cards)} card(s)' + (f' ({", ".join(parts)})' if parts else "")
             + f', {len(result["snakes"])} chain(s)']
    for s in result["snakes"]:
        lines.append(f'  {"complete" if s["complete"] else "open    "}  ' + " ".join(s["codes"]))
    for p in result["problems"]:
        lines.append(f'  problem {p["code"]}: {p["message"]}')
    return "\n".join(lines)


def _annotation_path(folder: Path, image: str, taken: set[Path]) -> Path:
    """NAME.png for image NAME.*, numbered NAME-2.png... when that file is an input or was
    drawn already in this batch (two folders' x.jpg)."""
    stem, n = Path(image).stem, 1
    target = folder / f"{stem}.png"
    while target.resolve() in taken:
        n += 1
        target = folder / f"{stem}-{n}.png"
    taken.add(target.resolve())
    return target


def main(args) -> int:
    from .analyze import Analyzer

    paths = image_paths(args.paths)
    if not paths:
        raise ValueError("no images found in " + ", ".join(args.paths))
    analyzer = Analyzer(args.profile)
    annotate_dir = Path(args.annotate) if args.annotate else None
    if annotate_dir:
        annotate_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    drawn_to = {Path(p).resolve() for p in paths}   # never drawn over: the inputs, and each other
    for path in paths:
        try:
            loaded = load_image(path)
        except ImageLoadError as exc:
            failed += 1
            message = " ".join(str(exc).split())
            print(f"error: {message}", file=sys.stderr)
            if args.json:
                print(json.dumps({"image": {"path": path}, "error": message}), flush=True)
            continue
        result = analyzer.analyze(loaded.pixels, path, (loaded.width, loaded.height))
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(summary(result), flush=True)
        if annotate_dir:
            import cv2
            from .annotate import annotate
            drawn = annotate(loaded.pixels, result)
            target = _annotation_path(annotate_dir, path, drawn_to)
            if not cv2.imwrite(str(target), drawn):
                raise OSError(f"cannot write {target}")
    return 2 if failed else 0
