"""The fleet's brokers hand a message to another worker only once its holder stopped heart-beating it: the
embedded transport's leases (SQLite) and the heartbeat on Redis's unacknowledged index, each on a real
broker."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from kombu import Connection, Exchange, Queue

from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.app import build_app
from ouroboros_gates.workers.broker import EmbeddedChannel, held_tags, hold, in_flight, kombu_url

QUEUE = Queue("probe-q", Exchange("probe-q", type="direct"), routing_key="probe-q")


def _connection(url: str, visibility_s: float) -> Connection:
    return Connection(
        kombu_url(url), transport_options={"visibility_timeout": visibility_s, "polling_interval": 0.05}
    )


def _send(conn: Connection, body: str) -> None:
    with conn.Producer() as producer:
        producer.publish(body, exchange=QUEUE.exchange, routing_key="probe-q", declare=[QUEUE])


def _take(conn: Connection) -> object:
    message = conn.SimpleQueue(QUEUE).get(timeout=5)
    return message


@pytest.fixture
def sqlite_broker(tmp_path: Path) -> str:
    return f"sqla+sqlite:///{tmp_path / 'broker.sqlite'}"


def test_an_sqlite_url_is_the_embedded_transport_and_others_are_kombus() -> None:
    assert kombu_url("sqla+sqlite:////s/broker.sqlite") == "ouro+sqlite:////s/broker.sqlite"
    assert kombu_url("sqla+postgresql://h/db") == "sqla+postgresql://h/db"
    assert kombu_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert build_app(Settings(state=Path("/tmp/x")), include=False).conf.broker_url.startswith("ouro+sqlite:")


def test_an_acknowledged_message_is_deleted_and_never_delivered_again(sqlite_broker: str) -> None:
    with _connection(sqlite_broker, 0.5) as conn:
        _send(conn, "one")
        message = _take(conn)
        assert message.payload == "one"  # type: ignore[attr-defined]
        assert in_flight(_app(sqlite_broker), ["probe-q"]) == {"probe-q": 1}
        message.ack()  # type: ignore[attr-defined]
        assert in_flight(_app(sqlite_broker), ["probe-q"]) == {"probe-q": 0}
    time.sleep(1.0)  # past the visibility timeout: nothing comes back
    with _connection(sqlite_broker, 0.5) as conn, pytest.raises(queue.Empty):
        conn.SimpleQueue(QUEUE).get(timeout=0.5)


def test_a_message_whose_holder_died_comes_back_after_the_visibility_timeout(sqlite_broker: str) -> None:
    holder = _connection(sqlite_broker, 1.0)
    _send(holder, "held")
    assert _take(holder).payload == "held"  # type: ignore[attr-defined]
    # The holder vanishes without acknowledging or restoring (as a SIGKILLed worker does).
    other = _connection(sqlite_broker, 1.0)
    with pytest.raises(queue.Empty):
        other.SimpleQueue(QUEUE).get(timeout=0.3)  # still leased
    time.sleep(1.2)
    again = _take(other)
    assert again.payload == "held"  # type: ignore[attr-defined]
    again.ack()  # type: ignore[attr-defined]
    other.release()


def test_a_heart_beaten_message_stays_with_its_holder(sqlite_broker: str) -> None:
    holder = _connection(sqlite_broker, 1.0)
    _send(holder, "long task")
    taken = _take(holder)
    channel = taken.channel  # type: ignore[attr-defined]
    assert isinstance(channel, EmbeddedChannel)
    other = _connection(sqlite_broker, 1.0)
    for _ in range(6):  # 1.8 s, well past the visibility timeout, renewed every 0.3 s
        hold(channel, held_tags(channel))
        with pytest.raises(queue.Empty):
            other.SimpleQueue(QUEUE).get(timeout=0.3)
    taken.ack()  # type: ignore[attr-defined]
    other.release()
    holder.release()


def test_a_rejected_message_is_visible_again_at_once(sqlite_broker: str) -> None:
    with _connection(sqlite_broker, 60) as conn:
        _send(conn, "retry me")
        _take(conn).reject(requeue=True)  # type: ignore[attr-defined]
        again = _take(conn)
        assert again.payload == "retry me"  # type: ignore[attr-defined]
        again.ack()  # type: ignore[attr-defined]
        assert in_flight(_app(sqlite_broker), ["probe-q"]) == {"probe-q": 0}


def _app(url: str) -> object:
    return build_app(Settings(broker_url=url), include=False)


@pytest.fixture
def redis_broker(redis_url: str) -> Iterator[str]:
    yield redis_url


def test_redis_heartbeat_keeps_a_held_message_from_being_restored(redis_broker: str) -> None:
    client = redis.Redis.from_url(redis_broker)
    holder = _connection(redis_broker, 1.0)
    _send(holder, "held on redis")
    taken = _take(holder)
    tags = held_tags(taken.channel)  # type: ignore[attr-defined]
    assert tags == [taken.delivery_tag]  # type: ignore[attr-defined]
    first = client.zscore("unacked_index", tags[0])
    time.sleep(0.3)
    hold(taken.channel, tags)  # type: ignore[attr-defined]
    assert client.zscore("unacked_index", tags[0]) > first  # type: ignore[operator]
    assert in_flight(_app(redis_broker), ["probe-q"]) == {"probe-q": 1}
    taken.ack()  # type: ignore[attr-defined]
    hold(taken.channel, tags)  # type: ignore[attr-defined]  # XX: an acknowledged tag is never put back
    assert client.zscore("unacked_index", tags[0]) is None
    holder.release()
