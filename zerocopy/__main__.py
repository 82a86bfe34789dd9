from zerocopy.cli import main

raise SystemExit(main())
