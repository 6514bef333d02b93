"""A stand-in for the ``nvtx`` package's domain API that records what is pushed and popped."""


class FakeNvtx:
    def __init__(self):
        self.events = []

    def get_domain(self, name):
        self.events.append(("domain", name))
        return self

    def get_event_attributes(self, message):
        return message

    def push_range(self, attrs):
        self.events.append(("push", attrs))

    def pop_range(self):
        self.events.append(("pop",))
