import sys
from pathlib import Path

# the scene helpers next to these tests
sys.path.insert(0, str(Path(__file__).resolve().parent))
