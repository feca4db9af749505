"""The partitions of engine/parallel.py as Ray actors: `check --cluster ADDRESS`.

The algorithm is the one of the worker processes (level-synchronous, batches
of raw bytes relayed by the coordinator); only the transport differs: each
`Partition` is a Ray actor, and a call on every partition is one `ray.get`
over their futures. Ray is an optional dependency (`pip install '.[cluster]'`).
"""

from __future__ import annotations

from protocol.engine import ModelError
from protocol.engine.partitioned.search import Partition, WorkerLost


class ClusterUnavailable(RuntimeError):
    """Ray is not installed, or the cluster at the address cannot be joined."""


def connect(address: str) -> object:
    """Join the Ray cluster at `address` (`local`: start one here), once per process."""
    try:
        import ray
    except ImportError:
        raise ClusterUnavailable("--cluster needs Ray: pip install '.[cluster]'") from None
    if not ray.is_initialized():
        try:
            if address == "local":
                ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, ValueError, RuntimeError) as error:
            raise ClusterUnavailable(f"cannot join the Ray cluster at {address}: {error}".splitlines()[0]) from None
    return ray


class RayPool:
    """`count` partitions as Ray actors, called as `parallel.ProcessPool` calls its processes."""

    def __init__(self, address: str, model_factory, count: int, record_edges: bool, kind=None):
        ray = self.ray = connect(address)
        cores = int(ray.cluster_resources().get("CPU", 0))
        if cores < count:  # an actor that finds no core waits for one forever
            raise ClusterUnavailable(f"the Ray cluster at {address} has {cores} CPUs for {count} workers: "
                                     f"give --workers {max(cores, 1)} or fewer")
        actor = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(kind or Partition)  # one core each, over the nodes
        self.actors = [actor.remote(model_factory, index, count, record_edges) for index in range(count)]
        self.call("size", [()] * count)  # wait until every actor is built

    def call(self, method: str, per_worker: list) -> list:
        futures = [getattr(actor, method).remote(*arguments) for actor, arguments in zip(self.actors, per_worker)]
        return [self._get(index, future) for index, future in enumerate(futures)]

    def call_one(self, index: int, method: str, *arguments):
        return self._get(index, getattr(self.actors[index], method).remote(*arguments))

    def _get(self, index: int, future):
        from ray.exceptions import RayActorError, RayTaskError

        try:
            return self.ray.get(future)
        except RayActorError as error:
            raise WorkerLost(f"worker {index} (Ray actor) died: {str(error).splitlines()[0]}; "
                             "the run has no verdict") from None
        except RayTaskError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, ModelError):  # the model broke a contract, on that actor as it would here
                raise cause from None
            raise WorkerLost(f"worker {index} (Ray actor) failed: {str(error).splitlines()[0]}", cause) from None

    def close(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone: nothing to stop
                pass
