"""Fewer py4j round trips: a JVM class and its static methods resolved once, the Columns of
``F.col`` and ``F.lit`` kept, short lists passed in one call.
"""

from __future__ import annotations

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView


def remember_jvm_lookups(jvm) -> None:
    """Make the session's py4j view ``jvm`` resolve a class, a package and a class's static method
    once, not at every use; keep the Column of each name and plain value (``SameAnswer``); pass
    short lists in one call (``ListInOneCall``). PySpark looks up both the class and the method for
    every ``functions.<f>`` it calls, a round trip each; a class and its static methods stay what
    they are while the JVM runs. Only this view and what it hands out remember (``KeptView``):
    py4j's own classes are left as they are."""
    from py4j.protocol import INPUT_CONVERTER, register_input_converter

    if not isinstance(jvm, KeptView):
        jvm.__class__ = KeptView
    if not any(isinstance(converter, ListInOneCall) for converter in INPUT_CONVERTER):
        register_input_converter(ListInOneCall(), prepend=True)


def _kept(found, owner_fqn: str | None, name: str):
    """What py4j found, as the remembering kind of it: a class as a ``KeptClass``, a package as a
    ``KeptPackage``, a static method of ``SAME_ANSWER`` as a ``SameAnswer``; None for anything
    else (a field's value, which may change, is never kept)."""
    if type(found) is JavaClass:
        return KeptClass(found._fqn, found._gateway_client)
    if type(found) is JavaPackage:
        return KeptPackage(found._fqn, found._gateway_client, found._jvm_id)
    if type(found) is JavaMember:
        return SameAnswer(found) if (owner_fqn, name) in SAME_ANSWER else found
    return None


def _remembered(owner, found, name: str):
    """``found`` kept on ``owner`` (where Python looks before ``__getattr__``) if it is kept at all."""
    kept = _kept(found, owner.__dict__.get("_fqn"), name)
    if kept is None:
        return found
    owner.__dict__[name] = kept
    return kept


class KeptView(JVMView):
    """A py4j view of the JVM that keeps the classes and packages it found (``_remembered``)."""

    def __getattr__(self, name):
        return _remembered(self, super().__getattr__(name), name)


class KeptPackage(JavaPackage):
    """A py4j package that keeps the classes and packages it found."""

    def __getattr__(self, name):
        return _remembered(self, super().__getattr__(name), name)


class KeptClass(JavaClass):
    """A py4j class that keeps its static methods and inner classes, never a field's value."""

    def __getattr__(self, name):
        return _remembered(self, super().__getattr__(name), name)


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
    """The py4j class object of ``name`` kept on ``gateway_client``, a ``KeptClass`` that knows its
    static methods once looked up."""
    kept = gateway_client.__dict__.setdefault("_forensics_classes", {})
    if name not in kept:
        kept[name] = KeptClass(name, gateway_client)
    return kept[name]
