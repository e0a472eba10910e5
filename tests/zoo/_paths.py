import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
ZOO = os.path.join(ROOT, "models", "zoo")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)
DEEPSEEK = os.path.join(ROOT, "models", "deepseek")
