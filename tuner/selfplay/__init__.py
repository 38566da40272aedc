"""Data the engine makes itself: self-play games at a fixed node count or depth, every searched
position kept with its search score, best move and the game's result, written as a position
set (``tuner selfplay``) and exported as ``FEN | score | result`` or EPD."""

from tuner.selfplay.config import SelfplayConfig
from tuner.selfplay.export import export_positions
from tuner.selfplay.run import selfplay

__all__ = ["SelfplayConfig", "export_positions", "selfplay"]
