"""The dashboard: a Flask app factory, blueprints, templates and static files."""
