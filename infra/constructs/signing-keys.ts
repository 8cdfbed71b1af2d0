import { CustomResource, Duration, Validations } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';
import { customResourceProvider } from './background-parts';
import { ServiceFunction } from './service-function';

export interface SigningKeysProps {
  stage: StageConfig;
}

/**
 * The secret holding the ES256 key set that identity signs access tokens with, and the custom
 * resource that fills it at deploy time (and rotates it when the stage's `signingKeyRotation`
 * changes). Key material never appears in the template: the bootstrap Lambda generates it.
 */
export class SigningKeys extends Construct {
  readonly secret: Secret;
  readonly bootstrap: ServiceFunction;
  /** Depend on this to start only once the secret holds a valid key set. */
  readonly ready: CustomResource;

  constructor(scope: Construct, id: string, props: SigningKeysProps) {
    super(scope, id);
    const { stage } = props;
    this.secret = new Secret(this, 'Secret', {
      description: 'ES256 key set ({"keys":[{kid, privateJwk, publicJwk}]}) that signs access tokens',
      // The default random placeholder is replaced by the bootstrap resource before first use.
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated by the SigningKeyBootstrap custom resource when the stage config signingKeyRotation changes: it keeps the previous key for verification, which a Secrets Manager rotation schedule would not, and tokens live minutes, not months.',
    });

    this.bootstrap = new ServiceFunction(this, 'Bootstrap', {
      entry: 'services/identity/src/handlers/signing-key-bootstrap.ts',
      description: 'Fills and rotates the JWT signing key secret (custom resource)',
      memoryMb: 256,
      timeout: Duration.seconds(30),
      environment: { POWERTOOLS_SERVICE_NAME: 'signing-key-bootstrap', SVC_STAGE: stage.name },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    this.secret.grantRead(this.bootstrap.role);
    // Only PutSecretValue: grantWrite would add UpdateSecret and version-stage moves.
    this.bootstrap.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:PutSecretValue'], resources: [this.secret.secretArn] }),
    );

    const provider = customResourceProvider(this, this.bootstrap, stage, 'signing key bootstrap');
    this.ready = new CustomResource(this, 'Bootstrapped', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::SigningKeyBootstrap',
      properties: { SecretArn: this.secret.secretArn, Rotation: String(stage.signingKeyRotation) },
    });
  }

  /** Read access to the key set: for the identity function only. */
  grantRead(grantee: IGrantable): void {
    this.secret.grantRead(grantee);
  }
}
