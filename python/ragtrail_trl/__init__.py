"""Train ragtrail policies and process reward models with TRL (SFT, DPO, PRM, GRPO)."""
