"""From syntactic distances to binary trees (``docs/onlstm.md`` section 3).  No torch.

Two decoders, both O(n) through a stack-built Cartesian tree and both free of Python recursion
(a 100,000-word sentence decodes fine):

``onlstm`` -- the paper's greedy top-down rule.  ``tree(w_a..w_b)``: a single word is the leaf;
    otherwise ``k`` is the position of the largest distance in ``a..b`` (the first one on ties) and
    the result is ``(tree(a..k-1), (w_k, tree(k+1..b)))``, or ``(w_a, tree(a+1..b))`` when
    ``k = a``, or ``(tree(a..b-1), w_b)`` when ``k = b``.

``split`` -- the unbiased rule.  ``d[k]`` scores the boundary between ``w_{k-1}`` and ``w_k``
    (``d[0]`` is unused); ``tree(w_a..w_b)`` splits at the ``k`` in ``a+1..b`` with the largest
    score (the first one on ties) into ``(tree(a..k-1), tree(k..b))``.  Every binary tree is
    reachable.

Why a Cartesian tree: the root of ``tree(a..b)`` is the (first) maximum of the range, and the
two sub-ranges on each side of it are decoded by the same rule, which is exactly the max-Cartesian
tree of the sequence with ties broken towards the left.  Building it with a stack is linear.

Trees are nested tuples: a leaf is whatever the caller passed in ``leaves`` (usually a ``str``),
an internal node a 2-tuple.  A one-word sentence is its leaf; an empty sentence has no tree.
"""
from typing import List, Sequence, Tuple

DECODERS = ("onlstm", "split")


def _cartesian(scores: Sequence[float]) -> Tuple[int, List[int], List[int]]:
    """Max-Cartesian tree of ``scores`` with ties resolved towards the left.

    Returns ``(root, left, right)``: child indices per position, ``-1`` for none.  On equal
    scores the earlier position must become the ancestor (``first on ties``), so only strictly
    smaller scores are popped off the stack.
    """
    n = len(scores)
    left = [-1] * n
    right = [-1] * n
    stack: List[int] = []
    for i in range(n):
        s = scores[i]
        last = -1
        while stack and scores[stack[-1]] < s:
            last = stack.pop()
        left[i] = last
        if stack:
            right[stack[-1]] = i
        stack.append(i)
    return (stack[0] if stack else -1), left, right


def _postorder(root: int, left: List[int], right: List[int]) -> List[int]:
    """Node indices children-first, without recursion."""
    order: List[int] = []
    todo = [root]
    while todo:
        node = todo.pop()
        order.append(node)
        if left[node] >= 0:
            todo.append(left[node])
        if right[node] >= 0:
            todo.append(right[node])
    order.reverse()  # every node now comes after both its children
    return order


def _check(distances: Sequence[float], leaves: Sequence) -> None:
    if len(distances) != len(leaves):
        raise ValueError(f"{len(distances)} distances for {len(leaves)} leaves")
    if not leaves:
        raise ValueError("cannot build a tree over an empty sentence")


def onlstm_tree(distances: Sequence[float], leaves: Sequence):
    """The paper's greedy top-down tree over ``leaves`` (``distances[i]`` belongs to ``leaves[i]``).

    ``distances``: any sequence of numbers, length n >= 1 (a list or a NumPy array of shape (n,)).
    O(n) time and memory.
    """
    _check(distances, leaves)
    scores = [float(x) for x in distances]
    root, left, right = _cartesian(scores)
    built = [None] * len(scores)
    for k in _postorder(root, left, right):
        node = leaves[k] if right[k] < 0 else (leaves[k], built[right[k]])
        built[k] = node if left[k] < 0 else (built[left[k]], node)
    return built[root]


def split_tree(distances: Sequence[float], leaves: Sequence):
    """The unbiased tree over ``leaves``: ``distances[k]`` (k >= 1) scores the boundary before
    ``leaves[k]``; ``distances[0]`` is ignored.  O(n) time and memory."""
    _check(distances, leaves)
    if len(leaves) == 1:
        return leaves[0]
    # Boundary j (0-based here) separates leaves[j] and leaves[j + 1] and has score distances[j + 1].
    scores = [float(x) for x in distances[1:]]
    root, left, right = _cartesian(scores)
    built = [None] * len(scores)
    for j in _postorder(root, left, right):
        lhs = leaves[j] if left[j] < 0 else built[left[j]]
        rhs = leaves[j + 1] if right[j] < 0 else built[right[j]]
        built[j] = (lhs, rhs)
    return built[root]


def check_decoder(name: str) -> str:
    """``name`` when it is one of :data:`DECODERS`; ValueError naming the choices otherwise."""
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(DECODERS)}")
    return name


def decode(distances: Sequence[float], leaves: Sequence, method: str = DECODERS[0]):
    """Tree over ``leaves`` by ``method`` (one of :data:`DECODERS`)."""
    return (onlstm_tree if check_decoder(method) == "onlstm" else split_tree)(distances, leaves)
