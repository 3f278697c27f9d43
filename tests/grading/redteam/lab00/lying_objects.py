"""Attack: objects whose __eq__ always says True, and an int subclass that lies."""


class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


class LyingInt(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__

    def __repr__(self):
        return "1"


def count_view(r, post_id):
    return Anything()


def reset(r, post_id):
    return LyingInt(-7)
