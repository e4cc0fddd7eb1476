from toolctl.cli import main

main()
