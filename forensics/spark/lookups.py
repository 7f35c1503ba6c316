"""Fewer py4j round trips: a JVM class and its static methods resolved once, the Columns of
``F.col`` and ``F.lit`` kept, short lists passed in one call.
"""

from __future__ import annotations


def remember_jvm_lookups() -> None:
    """Make py4j resolve a class (``jvm.<name>``) and a class's static method once, not at every
    use; keep the Column of each name and plain value (``SameAnswer``); pass short lists in one
    call (``ListInOneCall``). PySpark looks both up for every ``functions.<f>`` it calls, a round
    trip each; a class and its static methods stay what they are while the JVM runs. Fields and
    failures are not kept."""
    from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
    from py4j.protocol import INPUT_CONVERTER, register_input_converter

    for owner, keep in ((JVMView, (JavaClass, JavaPackage)), (JavaClass, (JavaClass, JavaMember))):
        if getattr(owner.__getattr__, "remembers", False):
            continue
        owner.__getattr__ = _remembering(owner.__getattr__, keep)
    if not any(isinstance(converter, ListInOneCall) for converter in INPUT_CONVERTER):
        register_input_converter(ListInOneCall(), prepend=True)


def _remembering(lookup, keep: tuple[type, ...]):
    """``lookup`` (a ``__getattr__``) that stores answers of the types ``keep`` on the object; a
    static method of ``SAME_ANSWER`` as a ``SameAnswer``."""

    def remembered(self, name):
        found = lookup(self, name)
        if isinstance(found, keep):
            if (self.__dict__.get("_fqn"), name) in SAME_ANSWER:
                found = SameAnswer(found)
            self.__dict__[name] = found
        return found

    remembered.remembers = True
    return remembered


SAME_ANSWER = {("org.apache.spark.sql.functions", "col"), ("org.apache.spark.sql.functions", "lit")}
"""Static methods whose answer depends on their argument alone: Spark's Column of a name
(``F.col``) and of a literal (``F.lit``), each an immutable expression that any number of other
expressions may hold."""
SAME_ANSWERS_KEPT = 4096
"""How many answers a ``SameAnswer`` keeps (it forgets them all when it has kept more)."""


class SameAnswer:
    """A static method of ``SAME_ANSWER`` that asks the JVM once per plain argument (a str, int or
    bool, told apart by type: ``lit(1)`` is not ``lit(True)``) and then answers with the same Java
    object; an analysis calls ``col`` and ``lit`` thousands of times with a few hundred distinct
    arguments. Other arguments go to the JVM each time."""

    def __init__(self, member):
        self.member = member
        self.answers: dict[tuple[type, object], object] = {}

    def __call__(self, *args):
        if len(args) != 1 or type(args[0]) not in (str, int, bool):
            return self.member(*args)
        key = (type(args[0]), args[0])
        found = self.answers.get(key)
        if found is None:
            if len(self.answers) >= SAME_ANSWERS_KEPT:
                self.answers.clear()
            found = self.answers[key] = self.member(*args)
        return found

    def __getattr__(self, name):
        return getattr(self.member, name)


LIST_OF_MOST = 10
"""Elements that Java's ``List.of`` takes one by one (more only as an array)."""


class ListInOneCall:
    """A py4j input converter: a Python list or tuple passed to a Java method (PySpark's column
    lists, ``PythonUtils.toSeq``) as ``java.util.List.of(...)``, one round trip for up to
    ``LIST_OF_MOST`` elements where py4j's own converter takes one per element; a longer list is
    filled that many at a time. A list with a None (which ``List.of`` refuses) is left to py4j;
    the list made is not modifiable, and the methods PySpark passes lists to copy them."""

    def can_convert(self, value) -> bool:
        return type(value) in (list, tuple) and not any(element is None for element in value)

    def convert(self, value, gateway_client):
        lists = _java_class(gateway_client, "java.util.List")
        if len(value) <= LIST_OF_MOST:
            return lists.of(*value)
        whole = _java_class(gateway_client, "java.util.ArrayList")(len(value))
        for start in range(0, len(value), LIST_OF_MOST):
            whole.addAll(lists.of(*value[start : start + LIST_OF_MOST]))
        return whole


def _java_class(gateway_client, name: str):
    """The py4j class object of ``name`` kept on ``gateway_client`` (whose ``remember_jvm_lookups``
    then knows its static methods)."""
    from py4j.java_gateway import JavaClass

    kept = gateway_client.__dict__.setdefault("_forensics_classes", {})
    if name not in kept:
        kept[name] = JavaClass(name, gateway_client)
    return kept[name]
