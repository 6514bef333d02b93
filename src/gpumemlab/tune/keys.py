"""What every tuned-table reader shares: the format version and the shape key ("MxNxK")."""

FORMAT = 1


def parse_mnk(shape: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in shape.lower().split("x"))
    return m, n, k
