"""The agents the simulation tests play: ConnectX agents as participants would write them."""

import inspect
import textwrap

RANDOM = b"""
import random

def act(observation, configuration):
    free = [c for c in range(configuration.columns) if observation.board[c] == 0]
    return random.choice(free)
"""

CRASHES = b"""
def agent(observation, configuration):
    raise ValueError("this agent always crashes")
"""

SLEEPS = b"""
import time

def agent(observation, configuration):
    time.sleep(3600)
    return 0
"""


def negamax() -> bytes:
    """kaggle-environments' own ConnectX negamax agent, its source as the package ships it (with
    the two helpers it calls), as one main.py."""
    from kaggle_environments.envs.connectx import connectx

    parts = [inspect.getsource(f) for f in (connectx.play, connectx.is_win, connectx.negamax_agent)]
    header = "from random import choice\nEMPTY = 0\n\n"
    return (header + "\n\n".join(textwrap.dedent(p) for p in parts)).encode()
