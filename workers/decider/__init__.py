"""The decider's Celery task: a push in, one ``DecisionMade`` per candidate out; the engine is ``decider``."""
