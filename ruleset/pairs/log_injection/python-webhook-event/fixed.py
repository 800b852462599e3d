@router.post("/webhooks")
def receive(event: WebhookEvent):
    import logging
    from fastapi import HTTPException
    logger = logging.getLogger(__name__)
    if event.kind not in HANDLERS:
        logger.error("unknown webhook kind: %s", repr(event.kind))
        raise HTTPException(status_code=400)
    return HANDLERS[event.kind](event)
