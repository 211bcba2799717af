"""The dashboard: a Flask app factory, blueprints, templates and static files.

- `app.create_app(service, pin=None)` and `app.open_service(data_dir)`: the WSGI app over
  one data folder (SQLite log + evidence stills);
- `service.GameService`: observe / override / correct / undo / finish / upload_photo,
  the live feed loop, and the fan-out to viewers (server-sent events, MJPEG);
- `feed.TableFeed`: what a live source provides (`events(start_after)`, `close()`),
  with `RecordFeed`, `FilmFeed`, `UploadFeed` and `open_feed(source)`, which hands
  cameras, streams and videos to `companion.track.open_table_feed`;
- `server.serve(...)` / `server.demo(...)`: `companion serve` and `companion demo`.
"""
