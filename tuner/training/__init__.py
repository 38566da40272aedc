"""What every tuning method runs inside: the driver's outer loop (:mod:`.driver`), the run
settings (:mod:`.tune_config`), the position sets and training splits (:mod:`.positions`,
:mod:`.training_data`), the executors that spread sweeps over cores or a Dask cluster
(:mod:`.executor`), the paced kernel calls that keep Ctrl-C prompt (:mod:`.pacer`,
:mod:`.paced`), run folders and checkpoints (:mod:`.run_folder`), weight masks and bounds
(:mod:`.weight_masks`) and the update rules (:mod:`.optim`)."""
