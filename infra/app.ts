/**
 * The CDK CLI's entry point (cdk.json: `npx tsx infra/app.ts`). The app itself
 * is built by buildApp, which tests import without synthesizing.
 */
import { buildApp } from './build-app.ts';

buildApp().app.synth();
