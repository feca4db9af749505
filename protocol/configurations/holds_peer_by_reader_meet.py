"""A late registrar at the bare `as_of`, under the trace's own rule. As
`HoldsPeerByReaderAsOf`, with the publisher setting `since` to the meet of its
holds rather than only raising it: the hold registered below `since` drags
`since` back (NoRegression), and once data has been merged physically the
trace claims accuracy at times it has already merged (PhysicalLeSince). Section
4's rising setter hides a defect the real trace does not hide."""
