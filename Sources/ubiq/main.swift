import UbiqCLI

await Ubiq.mainWithExitCodes()
