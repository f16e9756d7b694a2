"""Traces and feedback of every lane, and the learned edge-weight overlay (`state`, in INDEX/state.sqlite)."""

from .state import CAP_FACTOR, ETA, EdgeChange, FeedbackResult, StateStore, Trace

__all__ = ["CAP_FACTOR", "ETA", "EdgeChange", "FeedbackResult", "StateStore", "Trace"]
