from zerocopy.cli import entry

entry()
