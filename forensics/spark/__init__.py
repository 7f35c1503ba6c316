"""The toolkit's use of Spark: the session (``session``), its settings and execution modes
(``settings``), the driver JVM (``jvm``, ``archive``, ``lookups``), running and counting jobs
(``jobs``), keeping tables (``materialise``), reading results (``results``), and every use of
Spark's private handles (``handles``). Its public names are importable from here.
"""

from __future__ import annotations

from .archive import (  # noqa: F401
    CLASS_ARCHIVE_QUIET,
    JVM_EXIT_S,
    QUICK_TIER,
    class_archive_options,
    class_archive_path,
    local_jvm_options,
    record_class_archive,
)
from .handles import known_empty, scan_splits  # noqa: F401
from .jobs import KEPT_BUILDS, built_once, concurrently, counting_jobs  # noqa: F401
from .jvm import (  # noqa: F401
    JVM_CHATTER,
    JVM_LAST_WORDS_S,
    JVM_STDERR_THREAD,
    MIN_JAVA,
    NAMES_A_COLLECTOR,
    THROUGHPUT_GC,
    is_jvm_chatter,
    java_executable,
    java_major_version,
    jvm_stderr_without_chatter,
    local_collector,
    require_java,
)
from .lookups import LIST_OF_MOST, SAME_ANSWER, SAME_ANSWERS_KEPT, ListInOneCall, SameAnswer, remember_jvm_lookups  # noqa: F401
from .materialise import (  # noqa: F401
    HEAP_PER_CONCURRENT_ROW,
    empty_like,
    empty_of,
    kept_in_the_driver,
    kept_level,
    kept_with_rows,
    materialise,
    materialise_observed,
    materialised_together,
    releasing_checkpoints,
    room_to_run_at_once,
    rows_together,
    scratch_checkpoints,
)
from .results import (  # noqa: F401
    PIECE_ROWS,
    RESULT_PREFIX,
    TableReads,
    in_pieces,
    local_rows,
    one_partition_rows,
    remove_orphaned_results,
    scratch_root,
    tagged_lines,
    written_together,
)
from .session import (  # noqa: F401
    CONNECT_TIMEOUT_S,
    CONNECT_WINDOW_WARNING,
    DEFAULT_MASTER,
    DEFAULT_PORTS,
    DRIVER_MEMORY_GIB,
    DRIVER_MEMORY_SHARE,
    LOG4J2_CONFIG,
    MASTER_ENV,
    driver_ended,
    get_session,
    local_driver_memory,
    master_endpoints,
    require_reachable,
    require_spark_connect,
    resolve_master,
    running_session,
)
from .settings import (  # noqa: F401
    CHILD_BY_CHILD,
    CLASSIC_CONF,
    IN_THE_DRIVER,
    INTERPRETED,
    KEPT_IN,
    ONE_PARTITION,
    SESSION_CONF,
    SMALL_RESULT_PARTITIONS,
    SORTED_AGGREGATION,
    SPLIT_BYTES,
    STATIC_SHUFFLES,
    in_step_with_cores,
    runs_locally,
    sql_settings,
)
